/**
 * Calls of one statement made during one turn of the event loop — by every request whose bytes
 * arrived together — handed over together at the end of the turn, so that they run as one
 * statement or one transaction instead of one each: group commit on SQLite (the commit is most of
 * a write's cost), one round trip on PostgreSQL (the pg client's and the backend's work per round
 * trip cost more than the rows it carries). A caller waits no longer than the rest of the turn.
 */

export interface BatchedCall<In, Out> {
  input: In;
  resolve(output: Out): void;
  reject(error: unknown): void;
}

/**
 * `run` gets the calls of a turn (at most `max`; more start the next batch at once) and settles
 * each of them. A call it leaves unsettled when it throws or rejects fails with that error.
 */
export function batchedCalls<In, Out>(
  run: (calls: readonly BatchedCall<In, Out>[]) => void | Promise<void>,
  max: number,
): (input: In) => Promise<Out> {
  let waiting: BatchedCall<In, Out>[] = [];
  let scheduled = false;

  const runWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    const failAll = (error: unknown) => {
      for (const call of batch) call.reject(error); // settled calls ignore this
    };
    try {
      const running = run(batch);
      if (running) running.catch(failAll);
    } catch (error) {
      failAll(error);
    }
  };

  return (input) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
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
