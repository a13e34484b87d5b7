/**
 * The SQLite executor: which connection each statement runs on, and when.
 *
 * Writes take turns on the write connection: Kysely's queries and transactions (Kysely holds that
 * one connection for a whole transaction, across its awaits), and the synchronous writes of the hot
 * paths (`write`, `writer`, `claimer`: group commits, a grant's last use), which wait for its turn like a
 * Kysely query does — so no statement ever joins a transaction another request has open on it.
 *
 * Reads made outside a transaction (`read`) run on a connection of their own: a second
 * better-sqlite3 connection to the same file, read-only (`query_only`). In WAL mode it reads the
 * last committed state, never the rows of a transaction still open on the write connection, and
 * it never waits for one. The reads of one event-loop turn run together in one read transaction
 * (batched-calls.ts): in WAL mode every statement outside a transaction takes and releases a read
 * lock (two `fcntl` calls on the shared memory file), so N reads made together pay for one lock,
 * and their answers are sent together. The transaction is a snapshot taken at the first read.
 *
 * `sqlite::memory:` is one database per connection, so it cannot have a second one: there, a turn's
 * reads wait for the write connection's turn, after any transaction open on it has ended — they
 * still never see uncommitted rows, but they wait for the transactions in progress (tests and
 * one-off commands use it, never a server).
 *
 * The statements the stores declare (declared.ts) run here on that discipline: a read as a statement
 * kept on the read connection, with the reads of its turn; a write in the write connection's turn;
 * the claims of a turn in one transaction there (group commit).
 *
 * A read that belongs to a transaction (reading its own writes) runs through that transaction's
 * Kysely, not through `read`; and work inside a transaction never calls `read` or `write` for
 * rows it depends on: on a file `read` answers the committed state, and on `:memory:` it would wait
 * for the transaction that waits for it.
 */
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { batchedCalls, type BatchedCall } from './batched-calls.js';
import { lostAlone, type ClaimOnSqlite, type DeclaredClaim, type DeclaredRead, type DeclaredStatements, type DeclaredWrite } from './declared.js';
import { keptStatements, type KeptStatement } from './kept-statements.js';
import type { Database } from './schema.js';

export interface SqliteConnection {
  /** This connection's statement of `sql`, prepared at its first use and kept. */
  statement: KeptStatement;
  /** better-sqlite3's transaction function on this connection (a group commit's BEGIN IMMEDIATE … COMMIT). */
  transaction<Args extends unknown[], Result>(run: (...args: Args) => Result): SQLite.Transaction<(...args: Args) => Result>;
}

/** The statements declared by the stores (./declared.ts), and the connections for the rest of the hot paths. */
export interface SqliteExecutor extends DeclaredStatements {
  readonly dialect: 'sqlite';
  /** A read of committed rows, with the other reads of the turn; its callback runs synchronously. */
  read<T>(read: (connection: SqliteConnection) => T): Promise<T>;
  /** A synchronous write on the write connection in its turn, never inside another's transaction. */
  write<T>(write: (connection: SqliteConnection) => T): Promise<T>;
  /** True when reads have a connection of their own (a file); false on `:memory:`. */
  readonly readsApart: boolean;
  /** Closes the read connection (the write connection closes with Kysely). */
  close(): void;
}

/** Most reads one read transaction holds; more start the next. */
const MAX_READS = 256;

function connectionOf(handle: SQLite.Database): SqliteConnection {
  return { statement: keptStatements(handle), transaction: (run) => handle.transaction(run) };
}

export function createSqliteExecutor(path: string, writeHandle: SQLite.Database, kysely: Kysely<Database>): SqliteExecutor {
  const writer = connectionOf(writeHandle);
  // A turn on the write connection: Kysely's lock of its one connection, the one its
  // transactions hold until they end.
  const inWriteTurn = <T>(run: () => T): Promise<T> => kysely.connection().execute(async () => run());

  const readHandle = path === ':memory:' ? null : openReadConnection(path);
  const reader = readHandle ? connectionOf(readHandle) : writer;
  const readTransaction = (readHandle ?? writeHandle).transaction((run: () => void) => run());
  const readBatch = batchedCalls<(connection: SqliteConnection) => unknown, unknown>((calls) => {
    // A read that throws ends the batch; batchedCalls then runs the unanswered reads alone, so it
    // fails only its own caller.
    const readAll = () => {
      for (const call of calls) call.resolve(call.input(reader));
    };
    const run = () => (calls.length === 1 ? readAll() : readTransaction(readAll));
    if (readHandle) run();
    else return inWriteTurn(run);
  }, MAX_READS);

  const read = <T>(run: (connection: SqliteConnection) => T) => readBatch(run) as Promise<T>;

  return {
    dialect: 'sqlite',
    read,
    write: (write) => inWriteTurn(() => write(writer)),
    // The statement is prepared at the read's first call (the stores are made before the schema
    // may be migrated) and kept; always on the same connection, `reader`.
    reader<Params extends readonly unknown[], Out>(declared: DeclaredRead<Params, Out>) {
      const mode = declared.rows === 'values' ? 'raw' : 'objects';
      const decode = declared.decode as (row: unknown) => Out;
      let statement: SQLite.Statement | undefined;
      return (...params: Params) =>
        read((connection) => {
          const row = (statement ??= connection.statement(declared.sqlite, mode)).get(...params);
          return row === undefined ? undefined : decode(row);
        });
    },
    writer<Params extends readonly unknown[]>(declared: DeclaredWrite<Params>) {
      let statement: SQLite.Statement | undefined;
      return (...params: Params) =>
        inWriteTurn(() => {
          (statement ??= writer.statement(declared.sqlite)).run(...params);
        });
    },
    /**
     * Group commit: the claims of one turn in one BEGIN IMMEDIATE transaction on the write
     * connection, in its turn, with no await inside (nothing else runs in it); each caller is
     * answered after the commit that holds its claim. Each claim is still its own statements, so of
     * two claims of one key in a group the first wins and the second finds it claimed, as in two
     * transactions; the write lock orders them across processes (busy_timeout waits for another
     * process's commit). When one claim fails the whole group rolls back, and batchedCalls runs each
     * alone, so that only the failing one fails — but not after a lock held past busy_timeout or a
     * full disk (its default): alone, each would wait as long again, or fail the same way.
     */
    claimer<In>(declared: DeclaredClaim<In>) {
      const claim = claimOnSqlite(declared);
      const claimAll = writeHandle.transaction((group: readonly BatchedCall<In, boolean>[]) => group.map((call) => claim(writer.statement, call.input)));
      const commitGroup = (group: readonly BatchedCall<In, boolean>[]) =>
        inWriteTurn(() => {
          let claimed: boolean[];
          try {
            claimed = claimAll.immediate(group);
          } catch (error) {
            if (!lostAlone(declared.lost, group.length, error)) throw error;
            claimed = [false];
          }
          group.forEach((call, i) => call.resolve(claimed[i]!));
        });
      return batchedCalls(commitGroup, declared.max);
    },
    readsApart: readHandle !== null,
    close() {
      readHandle?.close();
    },
  };
}

/**
 * `work` as one Kysely transaction on SQLite that takes the write lock first (BEGIN IMMEDIATE): it
 * waits for another process's writer (busy_timeout) instead of failing at its first write with
 * SQLITE_BUSY, and what it reads before writing stays true until it commits. It holds the write
 * connection's turn throughout, like Kysely's own transactions.
 */
export function immediateTransaction<T>(kysely: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return kysely.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      // A no-op when SQLite already rolled back by itself (a full disk: database.ts).
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

/** A claim declared as one statement claims when it changes a row. */
function claimOnSqlite<In>(declared: DeclaredClaim<In>): ClaimOnSqlite<In> {
  const { sqlite: text, values } = declared;
  if (typeof text !== 'string') return text;
  let statement: SQLite.Statement | undefined;
  return (kept, input) => (statement ??= kept(text)).run(...values(input)).changes === 1;
}

function openReadConnection(path: string): SQLite.Database {
  const handle = new SQLite(path, { readonly: true, fileMustExist: true });
  handle.pragma('query_only = ON');
  // Another process's checkpoint that restarts the log, or its recovery of the log, can hold
  // readers back for a moment: wait instead of failing.
  handle.pragma('busy_timeout = 5000');
  return handle;
}
