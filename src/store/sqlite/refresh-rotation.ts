/** The refresh-token rotation on SQLite (the interface and the rules: ../refresh-rotation.ts). */
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { batchedCalls, type BatchedCall } from '../../db/batched-calls.js';
import type { Db } from '../../db/database.js';
import { onSqliteHandle, preparedQuery } from '../../db/prepared-query.js';
import type { Database } from '../../db/schema.js';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import { MAX_GROUP, type RefreshRotation, type Rotation } from '../refresh-rotation.js';
import { claimAndInsertPair, insertAccessToken, insertRefreshToken, selectRefreshToken, tokenColumns } from '../tokens.js';

/**
 * The rule of a rotation: the token is marked rotated (with the encrypted replay answer) only
 * while it is live — not rotated yet, not expired. Of any number of concurrent rotations of one
 * token exactly one changes its row; the write lock orders them, across processes too.
 */
const markRotated = preparedQuery((db: Kysely<Database>, now: number, replayResponse: string, oldHash: string, notExpiredAt: number) =>
  db
    .updateTable('refresh_tokens')
    .set({ rotated_at: now, replay_response: replayResponse })
    .where('token_key', '=', oldHash)
    .where('rotated_at', 'is', null)
    .where('expires_at', '>', notExpiredAt),
);

/**
 * The statements (the rule above, the pair's insert of tokens.ts, the token's read) are written
 * once and run two ways with the same SQL: on the better-sqlite3 handle, synchronously, in the
 * group commit and the turn's read transaction; or, while a Kysely transaction is open on the
 * handle (it spans awaits, and a statement run on the handle would join it), through Kysely,
 * which waits for that transaction to end.
 */
export function sqliteRefreshRotation(db: Db, handle: SQLite.Database): RefreshRotation {
  const q = db.kysely;
  const select = onSqliteHandle(handle, q, selectRefreshToken);
  const mark = onSqliteHandle(handle, q, markRotated);
  const insertAccess = onSqliteHandle(handle, q, insertAccessToken);
  const insertRefresh = onSqliteHandle(handle, q, insertRefreshToken);

  const rotateOne = ({ oldHash, now, replayResponse, access, refresh }: Rotation): boolean => {
    if (mark.run(now, replayResponse, oldHash, now).changes !== 1) return false;
    insertAccess.run(...tokenColumns(access));
    insertRefresh.run(...tokenColumns(refresh));
    return true;
  };
  const rotateGroup = handle.transaction((group: Rotation[]) => group.map(rotateOne));
  const rotateViaKysely = ({ oldHash, now, replayResponse, access, refresh }: Rotation): Promise<boolean> =>
    claimAndInsertPair(q, async (trx) => Number((await markRotated(trx, now, replayResponse, oldHash, now)).numAffectedRows) === 1, access, refresh);
  const turnRead = sqliteTurnReads(handle);

  /**
   * Group commit: the rotations asked for during one turn of the event loop commit in one
   * transaction (batched-calls.ts). The commit (writing the changed pages to the WAL) is most of a
   * rotation's cost, and rotations of one grant share index pages. Each caller is answered only
   * after the commit that holds its rotation. Within the group each rotation is still its own
   * conditional UPDATE, so two rotations of one token in one group have one winner, as in two
   * transactions.
   */
  const commitGroup = (group: readonly BatchedCall<Rotation, boolean>[]): void => {
    if (handle.inTransaction) {
      for (const call of group) rotateViaKysely(call.input).then(call.resolve, call.reject);
      return;
    }
    // When one rotation's statement fails, the whole group rolls back, and batchedCalls runs each
    // of its rotations alone (its own transaction), so only the failing one fails.
    const results = rotateGroup.immediate(group.map((call) => call.input));
    group.forEach((call, i) => call.resolve(results[i]!));
  };

  return {
    async find(tokenHash) {
      if (handle.inTransaction) return (await selectRefreshToken(q, tokenHash)).rows[0];
      // With the other reads of the turn, in one read transaction.
      return turnRead(() => select.get(tokenHash));
    },
    // A lock timeout (another process held the write lock for busy_timeout) is not retried alone:
    // each retry would wait as long again.
    rotate: batchedCalls(commitGroup, MAX_GROUP, { runAloneAfter: (error) => !isBusy(error) }),
  };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
