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
 * Declared here, run by the executor (db/declared.ts): on SQLite on the read connection, with the
 * other reads of the turn; on PostgreSQL the checks of one turn of the event loop as ONE statement,
 * prepared by name on each pooled connection.
 */
import type { Db } from '../db/database.js';
import { declareRead, declareWrite, turnStatement } from '../db/declared.js';
import type { Profile } from './profiles.js';

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

/** The token's, its grant's and its user's columns, in the order grantOf reads them. */
const COLUMNS = `t.user_id, t.app_id, t.grant_id, t.scope, t.expires_at, t.jkt, g.last_used_at,
  u.display_name, u.timezone, u.daily_step_goal, u.stride_length_cm, u.created_at, u.steps_written_lsn,
  u.birth_year, u.max_heart_rate`;

const FIND = declareRead<[tokenHash: string, now: number], BearerGrant>({
  sqlite: `select ${COLUMNS} from access_tokens t
    inner join grants g on g.id = t.grant_id
    inner join users u on u.id = t.user_id
    where t.token_key = ? and t.expires_at > ?`,
  // One primary-key probe per key whatever the planner knows of the tables: the plan kept for the
  // statement may be made while they are nearly empty, and without the LIMIT the lateral subquery
  // would be flattened into a join the planner may answer with a scan.
  postgres: turnStatement({
    name: 'stride_bearer_find_many',
    parameters: { key: 'text', now: 'bigint' },
    text: (input) => `select ${COLUMNS}, input.n
      from ${input}
      cross join lateral (select * from access_tokens x where x.token_key = input.key and x.expires_at > input.now limit 1) t
      inner join grants g on g.id = t.grant_id
      inner join users u on u.id = t.user_id`,
  }),
  decode: grantOf,
});

const TOUCH = declareWrite<[now: number, grantId: string]>({ name: 'stride_bearer_touch', sql: 'update grants set last_used_at = ? where id = ?' });

export function createBearerLookup(db: Db): BearerLookup {
  const touch = db.executor.writer(TOUCH);
  return { find: db.executor.reader(FIND), touch: (grantId, now) => touch(now, grantId) };
}

/**
 * The grant of a row of COLUMNS, read from its values (int8 columns are numbers on PostgreSQL too,
 * db/database.ts): no object is made for the row — building one through V8's API, a property at a
 * time, cost more than the join on SQLite.
 */
/** The names of a grant's space-separated scope string. */
const scopeList = (scope: string): string[] => (scope === '' ? [] : scope.split(' '));

function grantOf(values: readonly unknown[]): BearerGrant {
  const userId = values[0] as string;
  return {
    userId,
    appId: values[1] as string,
    grantId: values[2] as string,
    scopes: scopeList(values[3] as string),
    expiresAt: values[4] as number,
    jkt: values[5] as string | null,
    grantLastUsedAt: values[6] as number | null,
    stepsWrittenAt: values[12] as string | null,
    profile: {
      id: userId,
      display_name: values[7] as string,
      timezone: values[8] as string,
      daily_step_goal: values[9] as number,
      stride_length_cm: values[10] as number | null,
      birth_year: values[13] as number | null,
      max_heart_rate: values[14] as number | null,
      created_at: values[11] as number,
    },
  };
}
