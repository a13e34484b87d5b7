/** The refresh-token rotation on SQLite (the interface and the rules: ../refresh-rotation.ts). */
import type { Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import type { SqliteExecutor } from '../../db/executor.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { Database } from '../../db/schema.js';
import type { RefreshRotation } from '../refresh-rotation.js';
import { selectRefreshToken, type RefreshTokenRow } from '../tokens.js';
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
 * The rule above and the pair's insert of tokens.ts, group-committed on the write connection
 * (claimed-pairs.ts); the token's read with the other reads of the turn, on the read connection.
 */
export function sqliteRefreshRotation(db: Db, executor: SqliteExecutor): RefreshRotation {
  const q = db.kysely;
  const claim = sqliteClaimedPairs(db, executor, markRotated);
  return {
    find: (tokenHash) =>
      executor.read((connection) => {
        const { sql, values } = selectRefreshToken.bind(q, tokenHash);
        return connection.statement<RefreshTokenRow>(sql).get(...values);
      }),
    rotate: ({ oldHash, now, replayResponse, access, refresh }) => claim({ claim: [now, replayResponse, oldHash, now], access, refresh }),
  };
}
