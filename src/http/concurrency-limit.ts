/**
 * At most `max` requests of one key running at once in this process, for the requests whose cost
 * is their duration rather than their number (an export streams for as long as the history is
 * long): a rate limit would let a burst of them all start. A place is taken when the handler
 * asks for it and given back when the answer's connection closes — sent, failed, or dropped by the
 * client — so a request that ends in any way never holds one.
 *
 * Per process, on purpose: what the limit protects is the process's event loop and its share of
 * the database, which are per process too. With N processes behind a balancer one person can run
 * up to N × max (docs/web.md, "Your data and sessions").
 */
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors.js';

export interface ConcurrencyLimit {
  /**
   * Takes a place for `key` until `reply` closes; 429 `rate_limited` with Retry-After when none is
   * free. False, taking none, when the client has gone already: answer nothing then.
   */
  enter(key: string, reply: FastifyReply): boolean;
}

export function concurrencyLimit(max: number, retryAfterSeconds: number, what: string): ConcurrencyLimit {
  const running = new Map<string, number>();
  const leave = (key: string) => {
    const left = running.get(key)! - 1;
    if (left === 0) running.delete(key);
    else running.set(key, left);
  };
  return {
    enter(key, reply) {
      // The client may have gone while the handler awaited (its session, say): 'close' has come
      // already and would not come again to give the place back. Nothing is to be sent then.
      if (reply.raw.closed) return false;
      const count = running.get(key) ?? 0;
      if (count >= max) {
        throw new ApiError('rate_limited', `${max} ${what} at a time; retry in ${retryAfterSeconds} s`, { 'retry-after': String(retryAfterSeconds) });
      }
      running.set(key, count + 1);
      // 'close' comes once per response: after the last byte, or when the connection ends first.
      reply.raw.once('close', () => leave(key));
      return true;
    },
  };
}
