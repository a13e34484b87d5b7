/** The refresh-token rotation on SQLite (the interface and the rules: ../refresh-rotation.ts). */
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { onSqliteHandle, preparedQuery } from '../../db/prepared-query.js';
import type { Database } from '../../db/schema.js';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import type { RefreshRotation } from '../refresh-rotation.js';
import { selectRefreshToken } from '../tokens.js';
import { sqliteClaimedPairs } from './claimed-pairs.js';

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
 * The rule above and the pair's insert of tokens.ts, group-committed on the better-sqlite3 handle
 * (claimed-pairs.ts); the token's read in the turn's read transaction, or through Kysely while a
 * Kysely transaction is open on the handle (it spans awaits, and a statement run on the handle
 * would join it).
 */
export function sqliteRefreshRotation(db: Db, handle: SQLite.Database): RefreshRotation {
  const q = db.kysely;
  const select = onSqliteHandle(handle, q, selectRefreshToken);
  const claim = sqliteClaimedPairs(db, handle, markRotated);
  const turnRead = sqliteTurnReads(handle);
  return {
    async find(tokenHash) {
      if (handle.inTransaction) return (await selectRefreshToken(q, tokenHash)).rows[0];
      // With the other reads of the turn, in one read transaction.
      return turnRead(() => select.get(tokenHash));
    },
    rotate: ({ oldHash, now, replayResponse, access, refresh }) => claim({ claim: [now, replayResponse, oldHash, now], access, refresh }),
  };
}
