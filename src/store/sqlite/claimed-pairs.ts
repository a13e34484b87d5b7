/**
 * The single-use step of a code exchange or a refresh rotation on SQLite (claimAndInsertPair of
 * ../tokens.ts): the conditional UPDATE that claims the code or the token, and the insert of the
 * new token pair, all or nothing.
 *
 * The statements are Kysely queries compiled once (prepared-query.ts), run as statements kept on
 * the write connection, synchronously, in BEGIN IMMEDIATE transactions with no awaits inside (so
 * nothing else runs in them), several per commit when they arrive together (group commit: the
 * commit, writing the changed pages to the WAL, is most of a write's cost), in the write
 * connection's turn (db/sqlite-executor.ts), so never inside a transaction another request has
 * open. The write lock makes the UPDATE's condition the single-use guard across processes sharing
 * the file (busy_timeout waits for another process's commit).
 */
import { batchedCalls, type BatchedCall } from '../../db/batched-calls.js';
import type { Db } from '../../db/database.js';
import type { SqliteConnection, SqliteExecutor } from '../../db/executor.js';
import type { PreparedQuery } from '../../db/prepared-query.js';
import { MAX_GROUP } from '../refresh-rotation.js';
import { insertAccessToken, insertRefreshToken, isForeignKeyViolation, refreshTokenColumns, tokenColumns, type NewRefreshTokenRow, type NewTokenRow } from '../tokens.js';

export interface PairClaim<Args extends unknown[]> {
  /** The arguments of the claiming UPDATE. */
  claim: Args;
  access: NewTokenRow;
  refresh: NewRefreshTokenRow;
}

/**
 * True when `claim` changed exactly one row and the pair was stored; false when it changed none,
 * or the pair's grant or app was deleted meanwhile (the insert's foreign key).
 */
export function sqliteClaimedPairs<Args extends unknown[]>(
  db: Db,
  executor: SqliteExecutor,
  claim: PreparedQuery<Args, unknown>,
): (request: PairClaim<Args>) => Promise<boolean> {
  const q = db.kysely;
  const run = <A extends unknown[]>(connection: SqliteConnection, query: PreparedQuery<A, unknown>, ...args: A) => {
    const { sql, values } = query.bind(q, ...args);
    return connection.statement(sql).run(...values);
  };
  const claimOne = (connection: SqliteConnection, { claim: args, access, refresh }: PairClaim<Args>): boolean => {
    if (run(connection, claim, ...args).changes !== 1) return false;
    run(connection, insertAccessToken, ...tokenColumns(access));
    run(connection, insertRefreshToken, ...refreshTokenColumns(refresh));
    return true;
  };

  /**
   * Each caller is answered only after the commit that holds its claim. Within a group each claim
   * is still its own conditional UPDATE, so two claims of one code or token in one group have one
   * winner, as in two transactions.
   */
  const commitGroup = (group: readonly BatchedCall<PairClaim<Args>, boolean>[]) =>
    executor.write((connection) => {
      // When one claim's statement fails, the whole group rolls back, and batchedCalls runs each of
      // its claims alone (its own transaction), so only the failing one fails.
      let results: boolean[];
      try {
        results = connection.transaction(() => group.map((call) => claimOne(connection, call.input))).immediate();
      } catch (error) {
        // Alone, a claim whose grant or app was deleted meanwhile lost that race.
        if (group.length === 1 && isForeignKeyViolation(error)) results = [false];
        else throw error;
      }
      group.forEach((call, i) => call.resolve(results[i]!));
    });
  // A lock timeout (another process held the write lock for busy_timeout) is not retried alone:
  // each retry would wait as long again.
  return batchedCalls(commitGroup, MAX_GROUP, { runAloneAfter: (error) => !isBusy(error) });
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
