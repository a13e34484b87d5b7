/**
 * The hot path of the refresh_token grant (RFC 9700 §4.14.2): looking a refresh token up by its
 * hash, and the rotation itself — the conditional UPDATE that marks the old token rotated (with the
 * encrypted replay answer) and the INSERT of the new access and refresh tokens, all or nothing.
 * Exactly one of any number of concurrent rotations of one token, on any number of processes,
 * writes anything; the others get `false` and write nothing.
 *
 * One interface (here, with what both dialects share) and one implementation per dialect, in
 * sqlite/refresh-rotation.ts and postgres/refresh-rotation.ts:
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

export const REFRESH_COLUMNS = 'token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, rotated_at, replay_response';

/** Apps' columns, then the token's (NULLs when there is no such token): APP_COLUMNS, REFRESH_COLUMNS. */
export const CLIENT_AND_TOKEN_COLUMNS = [...APP_COLUMNS.split(', ').map((c) => `a.${c}`), ...REFRESH_COLUMNS.split(', ').map((c) => `r.${c}`)].join(', ');

export function clientAndTokenSql(placeholders: [clientId: string, tokenKey: string]): string {
  // The token's placeholder comes first in the text.
  return `SELECT ${CLIENT_AND_TOKEN_COLUMNS} FROM apps a LEFT JOIN refresh_tokens r ON r.token_key = ${placeholders[1]} WHERE a.client_id = ${placeholders[0]}`;
}

export type ClientAndTokenValues = [
  id: string, clientId: string, clientSecretHash: string | null, ownerId: string, name: string, description: string,
  websiteUrl: string, redirectUris: string, scopes: string, isPublic: number, createdAt: number, updatedAt: number,
  tokenKey: string | null, familyId: string, grantId: string, appId: string, userId: string, scope: string,
  expiresAt: number, tokenCreatedAt: number, rotatedAt: number | null, replayResponse: string | null,
];

export function clientAndTokenOf(v: ClientAndTokenValues | undefined): ClientAndToken {
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
 * The rotation store of a database, made by `byDialect` on first use (its statements are
 * prepared then: the stores may be made before the schema is migrated).
 */
export function createRefreshRotation(byDialect: () => RefreshRotation): RefreshRotation {
  let made: RefreshRotation | undefined;
  const rotation = () => (made ??= byDialect());
  return {
    find: (tokenHash) => rotation().find(tokenHash),
    // A client id no app can have (identifiers.ts) is not looked up, and its read not batched with others.
    findWithClient: (clientId, tokenKey) =>
      isClientIdSyntax(clientId) ? rotation().findWithClient(clientId, tokenKey) : Promise.resolve({ app: undefined, token: undefined }),
    rotate: (change) => rotation().rotate(change),
  };
}

/** The portable version (Kysely, an async transaction), for a SQLite handle inside a Kysely transaction. */
export function kyselyRotation(db: Db): RefreshRotation {
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
export const MAX_GROUP = 128;
