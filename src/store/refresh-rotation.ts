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
 * - PostgreSQL: the rotations asked for during one turn of the event loop are ONE statement
 *   (data-modifying CTEs over arrays of them, planned at each execution), so one round trip and
 *   one transaction for all of them, and so are the client-and-token reads (a named prepared
 *   statement). Under READ COMMITTED a concurrent UPDATE of the same row waits for the winner's
 *   commit, re-checks `rotated_at IS NULL` on the new row version, matches no row, and its INSERTs
 *   (which join the UPDATE's result) insert nothing.
 */
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import { batchedCalls, type BatchedCall } from '../db/batched-calls.js';
import { sqliteTurnReads } from '../db/sqlite-turn-reads.js';
import type { Db } from '../db/database.js';
import { APP_COLUMNS, appFromRow, findAppByClientId, type App } from './apps.js';
import { isClientIdSyntax } from './identifiers.js';
import { findRefreshToken, insertTokenPair, isForeignKeyViolation, markRefreshTokenRotated, type AccessTokenRow, type RefreshTokenRow } from './tokens.js';

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
const CLIENT_AND_TOKEN_COLUMNS = [...APP_COLUMNS.split(', ').map((c) => `a.${c}`), ...REFRESH_COLUMNS.split(', ').map((c) => `r.${c}`)].join(', ');

function clientAndTokenSql(placeholders: [clientId: string, tokenKey: string]): string {
  // The token's placeholder comes first in the text.
  return `SELECT ${CLIENT_AND_TOKEN_COLUMNS} FROM apps a LEFT JOIN refresh_tokens r ON r.token_key = ${placeholders[1]} WHERE a.client_id = ${placeholders[0]}`;
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

/**
 * The rotation store of a database: its statements are prepared once, on first use (the stores
 * may be made before the schema is migrated).
 */
export function createRefreshRotation(db: Db): RefreshRotation {
  let made: RefreshRotation | undefined;
  const byDialect = () => (made ??= db.sqlite ? sqliteRotation(db, db.sqlite) : db.pool ? postgresRotation(db.pool) : kyselyRotation(db));
  return {
    find: (tokenHash) => byDialect().find(tokenHash),
    // A client id no app can have (identifiers.ts) is not looked up, and its read not batched with others.
    findWithClient: (clientId, tokenKey) =>
      isClientIdSyntax(clientId) ? byDialect().findWithClient(clientId, tokenKey) : Promise.resolve({ app: undefined, token: undefined }),
    rotate: (rotation) => byDialect().rotate(rotation),
  };
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
        if (error instanceof LostRace || isForeignKeyViolation(error)) return false;
        throw error;
      }
    },
  };
}

/** Thrown inside the Kysely transaction to roll it back when the token was rotated already. */
class LostRace extends Error {}

/** Most rotations one SQLite transaction or one PostgreSQL statement commits; more start the next. */
const MAX_GROUP = 128;

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
      return Promise.resolve(select.get(tokenHash));
    },
    findWithClient(clientId, tokenKey) {
      if (handle.inTransaction) return viaKysely.findWithClient(clientId, tokenKey);
      // With the other reads of the turn, in one read transaction.
      return turnRead(() => clientAndTokenOf(selectClientAndToken.get(tokenKey, clientId)));
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

/**
 * PostgreSQL: the reads and the rotations of one turn each go as ONE statement (batched-calls.ts),
 * whatever their number — one round trip, and for rotations one transaction and one commit.
 */
function postgresRotation(pool: pg.Pool): RefreshRotation {
  const find: pg.QueryConfig<[string]> = {
    name: 'stride_refresh_token_find',
    text: `SELECT ${REFRESH_COLUMNS} FROM refresh_tokens WHERE token_key = $1`,
  };
  // Row n (1-based) answers the n-th (client id, token key) pair; a pair whose client does not
  // exist has no row.
  const findClientsAndTokens = {
    name: 'stride_refresh_clients_and_tokens',
    // One unique-index probe per pair, whatever the planner knows of the tables when it makes this
    // statement's plan once: LIMIT keeps the lateral subqueries from being flattened into joins.
    text: `SELECT q.n, ${CLIENT_AND_TOKEN_COLUMNS}
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(client_id, token_key, n)
      CROSS JOIN LATERAL (SELECT * FROM apps x WHERE x.client_id = q.client_id LIMIT 1) a
      LEFT JOIN LATERAL (SELECT * FROM refresh_tokens x WHERE x.token_key = q.token_key LIMIT 1) r ON true`,
    rowMode: 'array' as const,
  };
  const findWithClient = batchedCalls<[clientId: string, tokenKey: string], ClientAndToken>(async (calls) => {
    const result = await pool.query<[n: number, ...ClientAndTokenValues]>({
      ...findClientsAndTokens,
      values: [calls.map((call) => call.input[0]), calls.map((call) => call.input[1])],
    });
    const found = new Array<ClientAndTokenValues | undefined>(calls.length);
    for (const [n, ...values] of result.rows) found[Number(n) - 1] = values as ClientAndTokenValues;
    calls.forEach((call, i) => call.resolve(clientAndTokenOf(found[i])));
  }, MAX_GROUP);

  /**
   * The rotations of a batch, each still its own conditional UPDATE of its own row: under READ
   * COMMITTED a concurrent UPDATE of the same row (another process's batch) waits for the winner's
   * commit, re-checks `rotated_at IS NULL` on the new row version, matches nothing, and the INSERTs
   * (which join the UPDATE's result by the rotation's number) insert nothing for it. Were a token
   * twice in one statement, its row would be updated once and one new pair inserted for it; the
   * batch below never sends it twice (a duplicate asks again after the first has committed, and
   * loses).
   */
  const rotateText = `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                           $9::text[], $10::bigint[], $11::text[], $12::text[], $13::bigint[]) WITH ORDINALITY
        AS i(old_key, now, replay, access_key, family_id, grant_id, app_id, user_id, access_scope, access_expires, refresh_key, refresh_scope, refresh_expires, n)
    ), rotated AS (
      UPDATE refresh_tokens t SET rotated_at = i.now, replay_response = i.replay
      FROM input i
      WHERE t.token_key = i.old_key AND t.rotated_at IS NULL AND t.expires_at > i.now
      RETURNING i.n
    ), new_access AS (
      INSERT INTO access_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at)
      SELECT i.access_key, i.family_id, i.grant_id, i.app_id, i.user_id, i.access_scope, i.access_expires, i.now
      FROM input i JOIN rotated r ON r.n = i.n
    ), new_refresh AS (
      INSERT INTO refresh_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at)
      SELECT i.refresh_key, i.family_id, i.grant_id, i.app_id, i.user_id, i.refresh_scope, i.refresh_expires, i.now
      FROM input i JOIN rotated r ON r.n = i.n
    )
    SELECT n FROM rotated`;

  /** For each of `rotations` (distinct old keys), whether this statement rotated it. */
  const rotateAll = async (rotations: readonly Rotation[]): Promise<boolean[]> => {
    const columns: unknown[][] = Array.from({ length: 13 }, () => []);
    for (const { oldHash, now, replayResponse, access: a, refresh: r } of rotations) {
      if (a.family_id !== r.family_id || a.grant_id !== r.grant_id || a.app_id !== r.app_id || a.user_id !== r.user_id || a.created_at !== now || r.created_at !== now) {
        throw new Error('a rotated pair shares its family, grant, app, user and creation time');
      }
      const row = [oldHash, now, replayResponse, a.token_key, a.family_id, a.grant_id, a.app_id, a.user_id, a.scope, a.expires_at, r.token_key, r.scope, r.expires_at];
      row.forEach((value, i) => columns[i]!.push(value));
    }
    // Unnamed, so planned at each execution with the batch's keys and the table's current size: a
    // plan made once while refresh_tokens was nearly empty would scan it for the UPDATE's join.
    const result = await pool.query<[string]>({ text: rotateText, values: columns, rowMode: 'array' });
    const rotated = rotations.map(() => false);
    for (const [n] of result.rows) rotated[Number(n) - 1] = true;
    return rotated;
  };

  /**
   * Alone, a rotation whose grant or app was deleted meanwhile lost that race (isForeignKeyViolation);
   * in a batch, that error makes batchedCalls run each rotation alone, to find which one it was.
   */
  const rotateAlone = async (rotation: Rotation): Promise<boolean> => {
    try {
      return (await rotateAll([rotation]))[0]!;
    } catch (error) {
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  };

  /**
   * One statement for the batch's distinct tokens, then each duplicate alone. When the statement
   * fails (one rotation's grant deleted meanwhile, say, or a deadlock with another process's
   * batch), it rolled back as a whole and batchedCalls runs each rotation alone.
   */
  const rotateBatch = async (calls: readonly BatchedCall<Rotation, boolean>[]): Promise<void> => {
    const first = new Map<string, BatchedCall<Rotation, boolean>>();
    const again: BatchedCall<Rotation, boolean>[] = [];
    for (const call of calls) {
      if (first.has(call.input.oldHash)) again.push(call);
      else first.set(call.input.oldHash, call);
    }
    // Sorted, so that two processes' batches of the same tokens tend to lock them in the same order
    // (the join's plan decides the order; a deadlock is resolved by running each alone).
    const batch = [...first.values()].sort((x, y) => (x.input.oldHash < y.input.oldHash ? -1 : 1));
    const rotated = batch.length === 1 ? [await rotateAlone(batch[0]!.input)] : await rotateAll(batch.map((call) => call.input));
    batch.forEach((call, i) => call.resolve(rotated[i]!));
    for (const call of again) call.resolve(await rotateAlone(call.input));
  };

  return {
    async find(tokenHash) {
      const result = await pool.query<RefreshTokenRow, [string]>({ ...find, values: [tokenHash] });
      return result.rows[0];
    },
    findWithClient: (clientId, tokenKey) => findWithClient([clientId, tokenKey]),
    rotate: batchedCalls(rotateBatch, MAX_GROUP),
  };
}
