/** The refresh-token rotation on SQLite (the interface and the rules: ../refresh-rotation.ts). */
import type SQLite from 'better-sqlite3';
import { batchedCalls, type BatchedCall } from '../../db/batched-calls.js';
import type { Db } from '../../db/database.js';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import {
  kyselyRotation,
  MAX_GROUP,
  REFRESH_COLUMNS,
  type RefreshRotation,
  type Rotation,
} from '../refresh-rotation.js';
import type { RefreshTokenRow } from '../tokens.js';

export function sqliteRefreshRotation(db: Db, handle: SQLite.Database): RefreshRotation {
  const viaKysely = kyselyRotation(db);
  const select = handle.prepare<[string], RefreshTokenRow>(`SELECT ${REFRESH_COLUMNS} FROM refresh_tokens WHERE token_key = ?`);
  const markRotated = handle.prepare<[number, string, string, number]>(
    'UPDATE refresh_tokens SET rotated_at = ?, replay_response = ? WHERE token_key = ? AND rotated_at IS NULL AND expires_at > ?',
  );
  const insertAccess = handle.prepare<[string, string, string, string, string, string, number, number]>(
    'INSERT INTO access_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  // The new refresh token's rotated_at and replay_response are NULL by default.
  const insertRefresh = handle.prepare<[string, string, string, string, string, string, number, number]>(
    'INSERT INTO refresh_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const rotateOne = ({ oldHash, now, replayResponse, access: a, refresh: r }: Rotation): boolean => {
    if (markRotated.run(now, replayResponse, oldHash, now).changes !== 1) return false;
    insertAccess.run(a.token_key, a.family_id, a.grant_id, a.app_id, a.user_id, a.scope, a.expires_at, a.created_at);
    insertRefresh.run(r.token_key, r.family_id, r.grant_id, r.app_id, r.user_id, r.scope, r.expires_at, r.created_at);
    return true;
  };
  const rotateGroup = handle.transaction((group: Rotation[]) => group.map(rotateOne));
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
      for (const call of group) viaKysely.rotate(call.input).then(call.resolve, call.reject);
      return;
    }
    // When one rotation's statement fails, the whole group rolls back, and batchedCalls runs each
    // of its rotations alone (its own transaction), so only the failing one fails.
    const results = rotateGroup.immediate(group.map((call) => call.input));
    group.forEach((call, i) => call.resolve(results[i]!));
  };

  return {
    find(tokenHash) {
      if (handle.inTransaction) return viaKysely.find(tokenHash);
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
