/**
 * The bearer check of every resource API request, as ONE statement prepared once: the token row
 * (by the primary key of its hash), its grant's last-used time, and the profile of its user (users
 * by primary key). So `GET /v1/users/me` needs no second query, and a steps series gets the
 * profile's time zone with the token.
 *
 * Revocation deletes rows (directly or by cascade from the grant, the app or the user), so a row
 * that exists and has not expired is a valid token on every process sharing the database; nothing
 * about a token's validity is kept in the process.
 *
 * The statement and the row here; its execution per dialect in sqlite/bearer-lookup.ts
 * (the executor's read connection, with the other reads of the turn) and postgres/bearer-lookup.ts (prepared by name on each pooled
 * connection; the checks of one turn of the event loop go as one statement).
 */
import type { Profile } from './profiles.js';
import { scopesOf } from './scope-lists.js';

export interface BearerGrant {
  userId: string;
  appId: string;
  grantId: string;
  /** Shared between requests with the same scope string: never modify. */
  scopes: readonly string[];
  expiresAt: number;
  /** The thumbprint of the DPoP key the token is bound to (RFC 9449 §6); null for a bearer token. */
  jkt: string | null;
  grantLastUsedAt: number | null;
  /**
   * Where the user's latest step upload left the database (store/replica.ts): a series read goes to
   * a replica only once it has replayed that far. Null without a replica.
   */
  stepsWrittenAt: string | null;
  /** The profile of the token's user, as `GET /v1/users/me` returns it. */
  profile: Profile;
}

export interface BearerLookup {
  /** The live token whose hash is `tokenHash` at `now`, with its user's profile; undefined if none. */
  find(tokenHash: string, now: number): Promise<BearerGrant | undefined>;
  /** Records that the grant was used at `now`. */
  touch(grantId: string, now: number): Promise<void>;
}

/** The columns of FindRow; the grant's and the user's under names of their own. */
export const FIND_COLUMNS = `t.user_id, t.app_id, t.grant_id, t.scope, t.expires_at, t.jkt, g.last_used_at as grant_last_used_at,
  u.display_name, u.timezone, u.daily_step_goal, u.stride_length_cm, u.created_at as user_created_at, u.steps_written_lsn,
  u.birth_year, u.max_heart_rate`;

export const FIND_JOINS = `from access_tokens t
  inner join grants g on g.id = t.grant_id
  inner join users u on u.id = t.user_id`;

/** Most bearer checks one PostgreSQL statement answers; more start the next. */
export const MAX_BATCH = 256;

export const TOUCH_SQL = 'update grants set last_used_at = ? where id = ?';

/** A row of FIND_COLUMNS, by name; int8 columns are numbers on PostgreSQL too (db/database.ts). */
export interface FindRow {
  user_id: string;
  app_id: string;
  grant_id: string;
  scope: string;
  expires_at: number;
  jkt: string | null;
  grant_last_used_at: number | null;
  display_name: string;
  timezone: string;
  daily_step_goal: number;
  stride_length_cm: number | null;
  user_created_at: number;
  steps_written_lsn: string | null;
  birth_year: number | null;
  max_heart_rate: number | null;
}

/**
 * A row of FIND_COLUMNS from its values in that order (better-sqlite3's raw mode, which makes no
 * object of a row: building one through V8's API, a property at a time, cost more than the join).
 */
export function findRowOf(values: readonly unknown[]): FindRow {
  return {
    user_id: values[0] as string,
    app_id: values[1] as string,
    grant_id: values[2] as string,
    scope: values[3] as string,
    expires_at: values[4] as number,
    jkt: values[5] as string | null,
    grant_last_used_at: values[6] as number | null,
    display_name: values[7] as string,
    timezone: values[8] as string,
    daily_step_goal: values[9] as number,
    stride_length_cm: values[10] as number | null,
    user_created_at: values[11] as number,
    steps_written_lsn: values[12] as string | null,
    birth_year: values[13] as number | null,
    max_heart_rate: values[14] as number | null,
  };
}

export function grantOf(row: FindRow): BearerGrant {
  return {
    userId: row.user_id,
    appId: row.app_id,
    grantId: row.grant_id,
    scopes: scopesOf(row.scope),
    expiresAt: row.expires_at,
    jkt: row.jkt,
    grantLastUsedAt: row.grant_last_used_at,
    stepsWrittenAt: row.steps_written_lsn,
    profile: {
      id: row.user_id,
      display_name: row.display_name,
      timezone: row.timezone,
      daily_step_goal: row.daily_step_goal,
      stride_length_cm: row.stride_length_cm,
      birth_year: row.birth_year,
      max_heart_rate: row.max_heart_rate,
      created_at: row.user_created_at,
    },
  };
}
