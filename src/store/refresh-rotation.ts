/**
 * The hot path of the refresh_token grant (RFC 9700 §4.14.2): looking a refresh token up by its
 * hash, and the rotation itself — the conditional UPDATE that marks the old token rotated (with the
 * encrypted replay answer) and the INSERT of the new access and refresh tokens, all or nothing.
 * Exactly one of any number of concurrent rotations of one token, on any number of processes,
 * writes anything; the others get `false` and write nothing.
 *
 * Both are declared here and run by the executor (db/declared.ts). The read goes with the other
 * reads of the turn (on PostgreSQL in one statement with the apps read in it, client-reads.ts). The
 * rotation is a claim, written once per dialect because the dialects claim differently:
 * - SQLite: the UPDATE, then the pair's insert (claimed-pairs.ts), statement by statement in the
 *   group commit of the turn's rotations; the write lock makes the UPDATE's condition the
 *   single-use guard across processes sharing the file.
 * - PostgreSQL: the turn's rotations in ONE statement (data-modifying CTEs over arrays of them), so
 *   one round trip and one transaction for all of them. Under READ COMMITTED a concurrent UPDATE
 *   of the same row waits for the winner's commit, re-checks `rotated_at IS NULL` on the new row
 *   version, matches no row, and its INSERTs (which join the UPDATE's result) insert nothing.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import { declareClaim, declareRead, turnStatement } from '../db/declared.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database } from '../db/schema.js';
import { claimedPair, MAX_GROUP } from './claimed-pairs.js';
import { CLIENT_READS, TOKEN_COLUMN } from './client-reads.js';
import { isForeignKeyViolation, type NewRefreshTokenRow, type NewTokenRow, type RefreshTokenRow } from './tokens.js';

export interface Rotation {
  /** Hash of the refresh token being exchanged. */
  oldHash: string;
  now: number;
  /** The encrypted answer, kept on the old token for retries inside the replay window. */
  replayResponse: string;
  access: NewTokenRow;
  refresh: NewRefreshTokenRow;
}

export interface RefreshRotation {
  /** The refresh token whose hash is `tokenHash`, of whichever app: the caller compares app_id. */
  find(tokenHash: string): Promise<RefreshTokenRow | undefined>;
  /** True when this call rotated the (live, unexpired) token and stored the new pair. */
  rotate(rotation: Rotation): Promise<boolean>;
}

const FIND = declareRead<[tokenHash: string], RefreshTokenRow, RefreshTokenRow>({
  sqlite: 'select * from refresh_tokens where token_key = ?',
  rows: 'object',
  postgres: CLIENT_READS,
  parameters: ['token_key'],
  column: TOKEN_COLUMN,
  decode: (row) => row,
});

/**
 * The rule of a rotation on SQLite: the token is marked rotated (with the encrypted replay answer)
 * only while it is live — not rotated yet, not expired.
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
 * The same rule and the pair's insert on PostgreSQL, for a turn's rotations: each still its own
 * conditional UPDATE of its own row, and the INSERTs join the UPDATE's result by the rotation's
 * number. A token is never twice in one statement (the executor sends a repeat after the first
 * has committed, and it loses). Unnamed, so planned at each execution with the batch's keys and
 * the table's current size: a plan made once while refresh_tokens was nearly empty would scan it
 * for the UPDATE's join.
 */
const ROTATE_ALL = turnStatement({
  name: null,
  parameters: {
    old_key: 'text', now: 'bigint', replay: 'text', access_key: 'text', family_id: 'text', grant_id: 'text', app_id: 'text', user_id: 'text',
    access_scope: 'text', access_expires: 'bigint', refresh_key: 'text', refresh_scope: 'text', refresh_expires: 'bigint', access_jkt: 'text',
    refresh_jkt: 'text', requested_scope: 'text',
  },
  text: (input) => `
    WITH input AS (SELECT * FROM ${input}),
    rotated AS (
      UPDATE refresh_tokens t SET rotated_at = i.now, replay_response = i.replay
      FROM input i
      WHERE t.token_key = i.old_key AND t.rotated_at IS NULL AND t.expires_at > i.now
      RETURNING i.n, i.old_key
    ), new_access AS (
      INSERT INTO access_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt)
      SELECT i.access_key, i.family_id, i.grant_id, i.app_id, i.user_id, i.access_scope, i.access_expires, i.now, i.access_jkt
      FROM input i JOIN rotated r ON r.n = i.n
    ), new_refresh AS (
      INSERT INTO refresh_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt, requested_scope)
      SELECT i.refresh_key, i.family_id, i.grant_id, i.app_id, i.user_id, i.refresh_scope, i.refresh_expires, i.now, i.refresh_jkt, i.requested_scope
      FROM input i JOIN rotated r ON r.n = i.n
    )
    SELECT old_key FROM rotated`,
});

/** ROTATE_ALL's parameters for one rotation; its pair shares one row of them. */
function rotateValues({ oldHash, now, replayResponse, access: a, refresh: r }: Rotation): unknown[] {
  if (a.family_id !== r.family_id || a.grant_id !== r.grant_id || a.app_id !== r.app_id || a.user_id !== r.user_id || a.created_at !== now || r.created_at !== now) {
    throw new Error('a rotated pair shares its family, grant, app, user and creation time');
  }
  return [oldHash, now, replayResponse, a.token_key, a.family_id, a.grant_id, a.app_id, a.user_id, a.scope, a.expires_at, r.token_key, r.scope, r.expires_at, a.jkt, r.jkt, r.requested_scope];
}

export function createRefreshRotation(db: Db): RefreshRotation {
  const rotate = declareClaim<Rotation>({
    sqlite: claimedPair(db.kysely, markRotated, (r) => ({ claim: [r.now, r.replayResponse, r.oldHash, r.now], access: r.access, refresh: r.refresh })),
    postgres: ROTATE_ALL,
    values: rotateValues,
    max: MAX_GROUP,
    // A rotation whose grant or app was deleted meanwhile lost that race.
    lost: isForeignKeyViolation,
  });
  return { find: db.executor.reader(FIND), rotate: db.executor.claimer(rotate) };
}
