/**
 * The hot path of the refresh_token grant (RFC 9700 §4.14.2): looking a refresh token up by its
 * hash, and the rotation itself — the conditional UPDATE that marks the old token rotated (with the
 * encrypted replay answer) and the INSERT of the new access and refresh tokens, all or nothing.
 * Exactly one of any number of concurrent rotations of one token, on any number of processes,
 * writes anything; the others get `false` and write nothing.
 *
 * One interface (here) and one implementation per dialect, each writing the rule (the token is
 * live: not rotated, not expired) and the pair's insert once:
 * - SQLite (sqlite/refresh-rotation.ts): Kysely queries compiled once (the insert is the one a code
 *   exchange uses, tokens.ts), whose SQL runs on the better-sqlite3 handle in synchronous BEGIN
 *   IMMEDIATE transactions (no awaits inside, so nothing else runs in them), several per commit
 *   when they arrive together (group commit). The write lock makes the UPDATE's condition the
 *   single-use guard across processes sharing the file (busy_timeout waits for another process's
 *   commit). While a Kysely transaction is open on the handle (it spans awaits), statements on the
 *   handle would run inside it, so the same queries go through Kysely instead and wait for it.
 * - PostgreSQL (postgres/refresh-rotation.ts): the rotations asked for during one turn of the
 *   event loop are ONE statement (data-modifying CTEs over arrays of them, planned at each
 *   execution), so one round trip and one transaction for all of them. Under READ COMMITTED a
 *   concurrent UPDATE of the same row waits for the winner's commit, re-checks `rotated_at IS NULL`
 *   on the new row version, matches no row, and its INSERTs (which join the UPDATE's result) insert
 *   nothing.
 */
import type { NewRefreshTokenRow, NewTokenRow, RefreshTokenRow } from './tokens.js';

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


/**
 * The rotation store of a database, made by `byDialect` on first use (its statements are
 * prepared then: the stores may be made before the schema is migrated).
 */
export function createRefreshRotation(byDialect: () => RefreshRotation): RefreshRotation {
  let made: RefreshRotation | undefined;
  const rotation = () => (made ??= byDialect());
  return {
    find: (tokenHash) => rotation().find(tokenHash),
    rotate: (change) => rotation().rotate(change),
  };
}

/** Most rotations one SQLite transaction or one PostgreSQL statement commits; more start the next. */
export const MAX_GROUP = 128;
