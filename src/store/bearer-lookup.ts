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
 * SQLite: better-sqlite3 statements, synchronous. PostgreSQL: statements prepared by name on each
 * pooled connection; the checks of one turn of the event loop go as one statement.
 */
import type { Statement } from 'better-sqlite3';
import type pg from 'pg';
import { batchedCalls } from '../db/batched-calls.js';
import { sqliteTurnReads } from '../db/sqlite-turn-reads.js';
import type { Db } from '../db/database.js';
import { numberedPlaceholders } from './placeholders.js';
import type { Profile } from './profiles.js';

export interface BearerGrant {
  userId: string;
  appId: string;
  grantId: string;
  /** Shared between requests with the same scope string: never modify. */
  scopes: readonly string[];
  expiresAt: number;
  grantLastUsedAt: number | null;
  /** The profile of the token's user, as `GET /v1/users/me` returns it. */
  profile: Profile;
}

export interface BearerLookup {
  /** The live token whose hash is `tokenHash` at `now`, with its user's profile; undefined if none. */
  find(tokenHash: string, now: number): BearerGrant | undefined | Promise<BearerGrant | undefined>;
  /** Records that the grant was used at `now`. */
  touch(grantId: string, now: number): void | Promise<void>;
}

/** The columns of FindRow; the grant's and the user's under names of their own. */
const FIND_COLUMNS = `t.user_id, t.app_id, t.grant_id, t.scope, t.expires_at, g.last_used_at as grant_last_used_at,
  u.display_name, u.timezone, u.daily_step_goal, u.stride_length_cm, u.created_at as user_created_at`;

const FIND_JOINS = `from access_tokens t
  inner join grants g on g.id = t.grant_id
  inner join users u on u.id = t.user_id`;

/** Most bearer checks one PostgreSQL statement answers; more start the next. */
const MAX_BATCH = 256;

const FIND_SQLITE_SQL = `select ${FIND_COLUMNS} ${FIND_JOINS} where t.token_key = ? and t.expires_at > ?`;

const TOUCH_SQL = 'update grants set last_used_at = ? where id = ?';

/** A row of FIND_COLUMNS, by name; int8 columns are numbers on PostgreSQL too (db/database.ts). */
interface FindRow {
  user_id: string;
  app_id: string;
  grant_id: string;
  scope: string;
  expires_at: number;
  grant_last_used_at: number | null;
  display_name: string;
  timezone: string;
  daily_step_goal: number;
  stride_length_cm: number | null;
  user_created_at: number;
}

/** Parsed scope strings: few distinct values (the sorted subsets of the four scopes). */
const scopeLists = new Map<string, readonly string[]>();
const MAX_SCOPE_LISTS = 256;

function scopesOf(scope: string): readonly string[] {
  let list = scopeLists.get(scope);
  if (list === undefined) {
    list = Object.freeze(scope === '' ? [] : scope.split(' '));
    if (scopeLists.size >= MAX_SCOPE_LISTS) scopeLists.clear();
    scopeLists.set(scope, list);
  }
  return list;
}

function grantOf(row: FindRow): BearerGrant {
  return {
    userId: row.user_id,
    appId: row.app_id,
    grantId: row.grant_id,
    scopes: scopesOf(row.scope),
    expiresAt: row.expires_at,
    grantLastUsedAt: row.grant_last_used_at,
    profile: {
      id: row.user_id,
      display_name: row.display_name,
      timezone: row.timezone,
      daily_step_goal: row.daily_step_goal,
      stride_length_cm: row.stride_length_cm,
      created_at: row.user_created_at,
    },
  };
}

export function createBearerLookup(db: Db): BearerLookup {
  const { sqlite } = db;
  if (sqlite) {
    // Prepared on first use: the app may be built before the schema is migrated.
    let find: Statement<[string, number], FindRow> | undefined;
    let touch: Statement | undefined;
    const findOne = (tokenHash: string, now: number) => {
      find ??= sqlite.prepare<[string, number], FindRow>(FIND_SQLITE_SQL);
      const row = find.get(tokenHash, now);
      return row && grantOf(row);
    };
    const turnRead = sqliteTurnReads(sqlite);
    return {
      // With the other reads of the turn, in one read transaction.
      find: (tokenHash, now) => turnRead(() => findOne(tokenHash, now)),
      touch(grantId, now) {
        touch ??= sqlite.prepare(TOUCH_SQL);
        touch.run(now, grantId);
      },
    };
  }
  const pool = db.pool;
  if (!pool) throw new Error('the database has neither a SQLite handle nor a PostgreSQL pool');
  const findMany = postgresFindMany(pool);
  const touchText = numberedPlaceholders(TOUCH_SQL);
  return {
    find: (tokenHash, now) => findMany({ tokenHash, now }),
    async touch(grantId, now) {
      await pool.query({ name: 'stride_bearer_touch', text: touchText, values: [now, grantId] });
    },
  };
}

/**
 * PostgreSQL: the bearer checks of one turn of the event loop are ONE statement (batched-calls.ts),
 * the keys as an array; each caller then checks the expiry against its own clock reading.
 */
function postgresFindMany(pool: pg.Pool) {
  // One primary-key probe per key whatever the planner knows of the tables: the statement's plan is
  // made once (prepared by name) while the tables may still be nearly empty, and without the LIMIT
  // the lateral subquery would be flattened into a join the planner may answer with a scan.
  const text = `select k.key, ${FIND_COLUMNS}
    from unnest($1::text[]) as k(key)
    cross join lateral (select * from access_tokens x where x.token_key = k.key and x.expires_at > $2 limit 1) t
    inner join grants g on g.id = t.grant_id
    inner join users u on u.id = t.user_id`;
  return batchedCalls<{ tokenHash: string; now: number }, BearerGrant | undefined>(async (calls) => {
    const keys = [...new Set(calls.map((call) => call.input.tokenHash))];
    const earliest = Math.min(...calls.map((call) => call.input.now));
    const result = await pool.query<FindRow & { key: string }>({ name: 'stride_bearer_find_many', text, values: [keys, earliest] });
    const rows = new Map(result.rows.map((row) => [row.key, row]));
    for (const { input, resolve } of calls) {
      const row = rows.get(input.tokenHash);
      const grant = row && grantOf(row);
      resolve(grant && grant.expiresAt > input.now ? grant : undefined);
    }
  }, MAX_BATCH);
}
