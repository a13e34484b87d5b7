/**
 * Waiting on 429 and 503 when asked: Stride answers both with `Retry-After` (a rate limit; a
 * database away for now). A wait longer than `maxWaitSeconds` is not waited: the answer is
 * returned, and the caller's StrideError carries `retryAfter` to decide with.
 */
import { retryAfterSeconds } from './errors.js';
import type { Answer } from './transport.js';

export interface RetryOptions {
  /** Wait and retry on 429 rate_limited. Default false. */
  rateLimited?: boolean;
  /** Wait and retry on 503 temporarily_unavailable. Default false. */
  unavailable?: boolean;
  /** The longest single wait, in seconds. Default 60. */
  maxWaitSeconds?: number;
  /** Retries at most, after the first attempt. Default 3. */
  maxRetries?: number;
}

/** Seconds waited when a 429 or 503 names no `Retry-After`. */
const DEFAULT_WAIT_SECONDS = 1;

export function sleep(seconds: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, seconds * 1000);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The wait before retrying `response`, or undefined when it is not to be retried. */
export function waitBeforeRetry(answer: Answer, options: RetryOptions, retriesSoFar: number): number | undefined {
  const retried = (answer.status === 429 && options.rateLimited) || (answer.status === 503 && options.unavailable);
  if (!retried || retriesSoFar >= (options.maxRetries ?? 3)) return undefined;
  const seconds = retryAfterSeconds(answer.header('retry-after')) ?? DEFAULT_WAIT_SECONDS;
  return seconds <= (options.maxWaitSeconds ?? 60) ? seconds : undefined;
}

/** Sends, waiting and sending again as `options` allow. */
export async function sendWithRetries(send: () => Promise<Answer>, options: RetryOptions, signal?: AbortSignal | null): Promise<Answer> {
  for (let retries = 0; ; retries++) {
    const answer = await send();
    const wait = waitBeforeRetry(answer, options, retries);
    if (wait === undefined) return answer;
    await answer.discard();
    await sleep(wait, signal);
  }
}
