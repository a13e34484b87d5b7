/**
 * SQLite reads of one event-loop turn in one read transaction (batched-calls.ts): in WAL mode every
 * statement outside a transaction takes and releases a read lock (two `fcntl` calls on the shared
 * memory file, the price of letting other processes use the file), so N reads made together pay
 * for one lock instead of N. The answers of a turn are then also sent together, and the load's
 * other end is woken once for several of them.
 *
 * A read is a synchronous function of the handle; it runs at the end of the turn and its caller
 * gets its result (or its own error). The transaction is a snapshot taken at the first read, so the
 * reads see what a run of them one after another would have seen at that moment.
 */
import type SQLite from 'better-sqlite3';
import { batchedCalls } from './batched-calls.js';

export type TurnRead = <T>(read: () => T) => Promise<T>;

/** Most reads one transaction holds; more start the next. */
const MAX_READS = 256;

const perHandle = new WeakMap<SQLite.Database, TurnRead>();

export function sqliteTurnReads(handle: SQLite.Database): TurnRead {
  let turnRead = perHandle.get(handle);
  if (turnRead === undefined) {
    const inOneReadTransaction = handle.transaction((run: () => void) => run());
    const batch = batchedCalls<() => unknown, unknown>((calls) => {
      // A read that throws ends the batch; batchedCalls then runs the unanswered reads alone, so
      // it fails only its own caller.
      const readAll = () => {
        for (const call of calls) call.resolve(call.input());
      };
      // Inside a transaction already open on the handle (a Kysely one spans awaits), the reads run
      // in it, as they would one by one.
      if (calls.length === 1 || handle.inTransaction) readAll();
      else inOneReadTransaction(readAll);
    }, MAX_READS);
    turnRead = batch as TurnRead;
    perHandle.set(handle, turnRead);
  }
  return turnRead;
}
