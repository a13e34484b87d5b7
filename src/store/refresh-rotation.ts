/**
 * The hot path of the refresh_token grant (RFC 9700 §4.14.2): looking a refresh token up by its
 * hash, and the rotation itself — the conditional UPDATE that marks the old token rotated (with the
 * encrypted replay answer) and the INSERT of the new access and refresh tokens, all or nothing.
 * Exactly one of any number of concurrent rotations of one token, on any number of processes,
 * writes anything; the others get `false` and write nothing.
 *
 * One interface, one implementation per dialect:
 * - SQLite: statements prepared once on the better-sqlite3 handle; rotations run in synchronous
 *   BEGIN IMMEDIATE transactions (no awaits inside, so nothing else runs in them), several per
 *   commit when they arrive together (group commit, below). The write lock makes the UPDATE's
 *   condition the single-use guard across processes sharing the file (busy_timeout waits for
 *   another process's commit). While a Kysely transaction is open on the handle (it spans awaits),
 *   statements here would run inside it, so they go through Kysely instead and wait for it.
 * - PostgreSQL: named prepared statements; the rotation is ONE statement (data-modifying CTEs), so
 *   one round trip and its own transaction. Under READ COMMITTED a concurrent UPDATE of the same row
 *   waits for the winner's commit, re-checks `rotated_at IS NULL` on the new row version, matches no
 *   row, and its INSERTs (which select from the UPDATE's result) insert nothing.
 */
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import type { Db } from '../db/database.js';
import { APP_COLUMNS, appFromRow, findAppByClientId, type App } from './apps.js';
import { findRefreshToken, insertTokenPair, markRefreshTokenRotated, type AccessTokenRow, type RefreshTokenRow } from './tokens.js';

export interface Rotation {
  /** Hash of the refresh token being exchanged. */
  oldHash: string;
  now: number;
  /** The encrypted answer, kept on the old token for retries inside the replay window. */
  replayResponse: string;
  access: AccessTokenRow;
  refresh: RefreshTokenRow;
}

/** What one statement reads for a refresh request: the client, and the token if it exists. */
export interface ClientAndToken {
  app: App | undefined;
  /** Whichever app it belongs to; the caller compares app_id with the authenticated client. */
  token: RefreshTokenRow | undefined;
}

export interface RefreshRotation {
  find(tokenHash: string): Promise<RefreshTokenRow | undefined>;
  /**
   * The app with `clientId` and the refresh token with `tokenKey` in ONE statement (one round trip
   * on PostgreSQL, one read transaction on SQLite) — the two reads every refresh request starts with.
   */
  findWithClient(clientId: string, tokenKey: string): Promise<ClientAndToken>;
  /** True when this call rotated the (live, unexpired) token and stored the new pair. */
  rotate(rotation: Rotation): Promise<boolean>;
}

const REFRESH_COLUMNS = 'token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, rotated_at, replay_response';

/** Apps' columns, then the token's (NULLs when there is no such token): APP_COLUMNS, REFRESH_COLUMNS. */
function clientAndTokenSql(placeholders: [clientId: string, tokenKey: string]): string {
  // The token's placeholder comes first in the text.
  const app = APP_COLUMNS.split(', ').map((c) => `a.${c}`).join(', ');
  const token = REFRESH_COLUMNS.split(', ').map((c) => `r.${c}`).join(', ');
  return `SELECT ${app}, ${token} FROM apps a LEFT JOIN refresh_tokens r ON r.token_key = ${placeholders[1]} WHERE a.client_id = ${placeholders[0]}`;
}

type ClientAndTokenValues = [
  id: string, clientId: string, clientSecretHash: string | null, ownerId: string, name: string, description: string,
  websiteUrl: string, redirectUris: string, scopes: string, isPublic: number, createdAt: number, updatedAt: number,
  tokenKey: string | null, familyId: string, grantId: string, appId: string, userId: string, scope: string,
  expiresAt: number, tokenCreatedAt: number, rotatedAt: number | null, replayResponse: string | null,
];

function clientAndTokenOf(v: ClientAndTokenValues | undefined): ClientAndToken {
  if (v === undefined) return { app: undefined, token: undefined };
  const app = appFromRow({
    id: v[0], client_id: v[1], client_secret_hash: v[2], owner_id: v[3], name: v[4], description: v[5],
    website_url: v[6], redirect_uris: v[7], scopes: v[8], is_public: Number(v[9]), created_at: Number(v[10]), updated_at: Number(v[11]),
  });
  const token: RefreshTokenRow | undefined = v[12] === null ? undefined : {
    token_key: v[12], family_id: v[13], grant_id: v[14], app_id: v[15], user_id: v[16], scope: v[17],
    expires_at: Number(v[18]), created_at: Number(v[19]), rotated_at: v[20] === null ? null : Number(v[20]), replay_response: v[21],
  };
  return { app, token };
}

const implementations = new WeakMap<Db, RefreshRotation>();

/** The rotation store of a database; statements are prepared once per database handle. */
export function createRefreshRotation(db: Db): RefreshRotation {
  let rotation = implementations.get(db);
  if (rotation === undefined) {
    rotation = db.sqlite ? sqliteRotation(db, db.sqlite) : db.pool ? postgresRotation(db.pool) : kyselyRotation(db);
    implementations.set(db, rotation);
  }
  return rotation;
}

/** The portable version (Kysely, an async transaction). */
function kyselyRotation(db: Db): RefreshRotation {
  return {
    find: (tokenHash) => findRefreshToken(db.kysely, tokenHash),
    async findWithClient(clientId, tokenKey) {
      const app = await findAppByClientId(db.kysely, clientId);
      return { app, token: app && (await findRefreshToken(db.kysely, tokenKey)) };
    },
    async rotate({ oldHash, now, replayResponse, access, refresh }) {
      try {
        await db.kysely.transaction().execute(async (trx) => {
          if (!(await markRefreshTokenRotated(trx, oldHash, now, replayResponse))) throw new LostRace();
          await insertTokenPair(trx, access, refresh);
        });
        return true;
      } catch (error) {
        if (error instanceof LostRace) return false;
        throw error;
      }
    },
  };
}

/** Thrown inside the Kysely transaction to roll it back when the token was rotated already. */
class LostRace extends Error {}

/** Most rotations one SQLite transaction commits (group commit); more start the next one. */
const MAX_GROUP = 128;

interface Waiting {
  rotation: Rotation;
  resolve(rotated: boolean): void;
  reject(error: unknown): void;
}

function sqliteRotation(db: Db, handle: SQLite.Database): RefreshRotation {
  const viaKysely = kyselyRotation(db);
  const select = handle.prepare<[string], RefreshTokenRow>(`SELECT ${REFRESH_COLUMNS} FROM refresh_tokens WHERE token_key = ?`);
  const selectClientAndToken = handle.prepare<[string, string], ClientAndTokenValues>(clientAndTokenSql(['?', '?'])).raw(true); // binds (tokenKey, clientId): their order in the SQL
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
  const rotateAlone = handle.transaction(rotateOne);
  const rotateGroup = handle.transaction((group: Waiting[]) => group.map((waiting) => rotateOne(waiting.rotation)));

  /**
   * Group commit: the rotations asked for during one turn of the event loop (every request whose
   * bytes arrived together) commit in one transaction, at the end of the turn. The commit (writing
   * the changed pages to the WAL) is most of a rotation's cost, and rotations of one grant share
   * index pages. Each caller is answered only after the commit that holds its rotation. Within the
   * group each rotation is still its own conditional UPDATE, so two rotations of one token in one
   * group have one winner, as in two transactions.
   */
  let waiting: Waiting[] = [];
  let scheduled = false;
  const commitWaiting = (): void => {
    scheduled = false;
    const group = waiting;
    waiting = [];
    if (group.length === 0) return;
    if (handle.inTransaction) {
      for (const w of group) viaKysely.rotate(w.rotation).then(w.resolve, w.reject);
      return;
    }
    let results: boolean[];
    try {
      results = rotateGroup.immediate(group);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (group.length === 1 || (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))) {
        for (const w of group) w.reject(error);
        return;
      }
      // One rotation's failed statement rolled the whole group back; each gets its own transaction,
      // so only the failing one fails.
      for (const w of group) {
        try {
          w.resolve(rotateAlone.immediate(w.rotation));
        } catch (own) {
          w.reject(own);
        }
      }
      return;
    }
    for (let i = 0; i < group.length; i++) group[i]!.resolve(results[i]!);
  };

  return {
    find(tokenHash) {
      if (handle.inTransaction) return viaKysely.find(tokenHash);
      return Promise.resolve(select.get(tokenHash));
    },
    findWithClient(clientId, tokenKey) {
      if (handle.inTransaction) return viaKysely.findWithClient(clientId, tokenKey);
      return Promise.resolve(clientAndTokenOf(selectClientAndToken.get(tokenKey, clientId)));
    },
    rotate(rotation) {
      return new Promise<boolean>((resolve, reject) => {
        waiting.push({ rotation, resolve, reject });
        if (waiting.length >= MAX_GROUP) commitWaiting();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(commitWaiting);
        }
      });
    },
  };
}

function postgresRotation(pool: pg.Pool): RefreshRotation {
  const find: pg.QueryConfig<[string]> = {
    name: 'stride_refresh_token_find',
    text: `SELECT ${REFRESH_COLUMNS} FROM refresh_tokens WHERE token_key = $1`,
  };
  const findClientAndToken = {
    name: 'stride_refresh_client_and_token',
    text: clientAndTokenSql(['$1', '$2']),
    rowMode: 'array' as const,
  };
  const rotateText = `
    WITH rotated AS (
      UPDATE refresh_tokens SET rotated_at = $2, replay_response = $3
      WHERE token_key = $1 AND rotated_at IS NULL AND expires_at > $2
      RETURNING 1
    ), new_access AS (
      INSERT INTO access_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at)
      SELECT $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::bigint, $2::bigint FROM rotated
    ), new_refresh AS (
      INSERT INTO refresh_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at)
      SELECT $11::text, $5::text, $6::text, $7::text, $8::text, $12::text, $13::bigint, $2::bigint FROM rotated
    )
    SELECT count(*)::int AS n FROM rotated`;
  return {
    async find(tokenHash) {
      const result = await pool.query<RefreshTokenRow, [string]>({ ...find, values: [tokenHash] });
      return result.rows[0];
    },
    async findWithClient(clientId, tokenKey) {
      const result = await pool.query<ClientAndTokenValues>({ ...findClientAndToken, values: [clientId, tokenKey] });
      return clientAndTokenOf(result.rows[0]);
    },
    async rotate({ oldHash, now, replayResponse, access: a, refresh: r }) {
      if (a.family_id !== r.family_id || a.grant_id !== r.grant_id || a.app_id !== r.app_id || a.user_id !== r.user_id || a.created_at !== now || r.created_at !== now) {
        throw new Error('a rotated pair shares its family, grant, app, user and creation time');
      }
      const result = await pool.query<{ n: number }>({
        name: 'stride_refresh_token_rotate',
        text: rotateText,
        values: [oldHash, now, replayResponse, a.token_key, a.family_id, a.grant_id, a.app_id, a.user_id, a.scope, a.expires_at, r.token_key, r.scope, r.expires_at],
      });
      return result.rows[0]!.n === 1;
    },
  };
}
