/**
 * Fitbit's rate limit as Fitbit announces it: requests per person and app in each clock hour
 * (FITBIT_RATE_LIMIT, default 150), counted by every process together through Redis like the other
 * limits (http/rate-limit.ts), with `Fitbit-Rate-Limit-Limit`, `-Remaining` and `-Reset` (seconds to
 * the top of the hour) on every answer after the token is checked, and 429 with Retry-After when
 * the hour's requests are spent.
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { keyedRateLimit } from '../../http/rate-limit.js';
import { FitbitError } from './errors.js';

export function fitbitRateLimit(app: FastifyInstance): onRequestHookHandler | null {
  const limit = app.ctx.config.rateLimits.fitbit;
  const count = keyedRateLimit(app, limit, 'fitbit');
  if (limit === null || count === null) return null;
  const { clock } = app.ctx;
  return async (request, reply) => {
    const now = clock();
    const hour = Math.floor(now / 3600);
    const reset = 3600 - (now % 3600);
    // A new key each clock hour: the count starts afresh at the top of the hour, as Fitbit's.
    const spent = await count(request, `${request.auth.appId} ${request.auth.userId} ${hour}`);
    reply.headers({
      'fitbit-rate-limit-limit': String(limit.max),
      'fitbit-rate-limit-remaining': String(Math.max(0, spent.remaining)),
      'fitbit-rate-limit-reset': String(reset),
    });
    if (spent.exceeded) throw new FitbitError(429, 'system', `Too many requests: ${limit.max} an hour for each person and app; the count starts again in ${reset} s`, 'n/a', { 'retry-after': String(reset) });
  };
}
