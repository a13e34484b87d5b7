/**
 * Calls of one statement made during one turn of the event loop — by every request whose bytes
 * arrived together — handed over together at the end of the turn, so that they run as one
 * statement or one transaction instead of one each: group commit on SQLite (the commit is most of
 * a write's cost), one round trip on PostgreSQL (the pg client's and the backend's work per round
 * trip cost more than the rows it carries). A call waits for the rest of its turn, then for its
 * batch's statement.
 *
 * A batch whose run fails is not one caller's failure: the calls it left unanswered run again,
 * each alone, so that one bad input (or one row's conflict) fails only its own caller.
 */

import { isDatabaseUnavailable } from './unavailable.js';

export interface BatchedCall<In, Out> {
  input: In;
  resolve(output: Out): void;
  reject(error: unknown): void;
}

export interface BatchOptions {
  /**
   * Whether the unanswered calls of a failed batch run again alone after this error; when false
   * they fail with it. For errors that running alone would only repeat, once per call (a lock
   * timeout). Default: unless the database is unavailable (unavailable.ts) — alone, each call would
   * only wait for a connection as long again, then fail the same way.
   */
  runAloneAfter?: (error: unknown) => boolean;
}

/** A call that knows whether its runner has answered it (resolve and reject are bound: runners pass them on). */
class PendingCall<In, Out> implements BatchedCall<In, Out> {
  settled = false;
  constructor(
    readonly input: In,
    private readonly settle: { resolve(output: Out): void; reject(error: unknown): void },
  ) {}

  readonly resolve = (output: Out): void => {
    this.settled = true;
    this.settle.resolve(output);
  };

  readonly reject = (error: unknown): void => {
    this.settled = true;
    this.settle.reject(error);
  };
}

/**
 * `run` gets the calls of a turn (at most `max`; more start the next batch at once) and settles
 * each of them. When it throws or rejects, the calls it left unsettled run again one by one (see
 * BatchOptions); a call that fails alone fails with its own error.
 */
export function batchedCalls<In, Out>(
  run: (calls: readonly BatchedCall<In, Out>[]) => void | Promise<void>,
  max: number,
  { runAloneAfter = (error) => !isDatabaseUnavailable(error) }: BatchOptions = {},
): (input: In) => Promise<Out> {
  let waiting: PendingCall<In, Out>[] = [];
  let scheduled = false;

  const start = (batch: PendingCall<In, Out>[]): void => {
    const failed = (error: unknown) => {
      const unanswered = batch.filter((call) => !call.settled);
      if (batch.length > 1 && runAloneAfter(error)) for (const call of unanswered) start([call]);
      else for (const call of unanswered) call.reject(error);
    };
    try {
      const running = run(batch);
      if (running) running.catch(failed);
    } catch (error) {
      failed(error);
    }
  };

  const runWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    if (batch.length > 0) start(batch);
  };

  return (input) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push(new PendingCall(input, { resolve, reject }));
      if (waiting.length >= max) runWaiting();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          runWaiting();
        });
      }
    });
}
