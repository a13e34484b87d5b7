/**
 * Access and refresh tokens, kept only as keys made of their issue time and SHA-256 hash.
 * Invalidation is always a DELETE, so the bearer check (one primary-key lookup) sees it on the next
 * request on every process.
 */
import type { Kysely, Selectable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Db } from '../db/database.js';
import type { AccessTokenTable, Database, RefreshTokenTable } from '../db/schema.js';

type Q = Kysely<Database>;
export type AccessTokenRow = Selectable<AccessTokenTable>;
export type RefreshTokenRow = Selectable<RefreshTokenTable>;
/** A new access token as inserted. */
export type NewTokenRow = AccessTokenRow;
/** A new refresh token as inserted: its rotated_at and replay_response are NULL by default. */
export type NewRefreshTokenRow = NewTokenRow & Pick<RefreshTokenRow, 'requested_scope'>;

type TokenColumns = [tokenKey: string, familyId: string, grantId: string, appId: string, userId: string, scope: string, expiresAt: number, createdAt: number, jkt: string | null];
type RefreshTokenColumns = [...TokenColumns, requestedScope: string | null];

export const tokenColumns = (t: NewTokenRow): TokenColumns =>
  [t.token_key, t.family_id, t.grant_id, t.app_id, t.user_id, t.scope, t.expires_at, t.created_at, t.jkt];

export const refreshTokenColumns = (t: NewRefreshTokenRow): RefreshTokenColumns =>
  [t.token_key, t.family_id, t.grant_id, t.app_id, t.user_id, t.scope, t.expires_at, t.created_at, t.jkt, t.requested_scope];

const tokenValues = (...[token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt]: TokenColumns) =>
  ({ token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt });

const refreshTokenValues = (...[token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt, requested_scope]: RefreshTokenColumns) =>
  ({ token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt, requested_scope });

/** The insert of a new token pair's two rows, for a code exchange and (on SQLite) a rotation. */
export const insertAccessToken = preparedQuery((db: Q, ...columns: TokenColumns) => db.insertInto('access_tokens').values(tokenValues(...columns)));
// A new refresh token's rotated_at and replay_response are NULL by default.
export const insertRefreshToken = preparedQuery((db: Q, ...columns: RefreshTokenColumns) => db.insertInto('refresh_tokens').values(refreshTokenValues(...columns)));

/**
 * A new pair refers to its grant and app; when either was deleted by a transaction that committed
 * while the pair was being written (an app deleted, a grant revoked), the insert fails on the
 * foreign key, and the exchange or rotation it belongs to wrote nothing: it lost that race.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * The single-use step of a code exchange or a rotation: `claim` (the conditional UPDATE that marks
 * the code consumed or the token rotated) and the new pair commit together, or nothing does.
 * False when the claim finds nothing to claim, or the pair's grant or app was deleted meanwhile.
 */
export async function claimAndInsertPair(db: Q, claim: (trx: Q) => Promise<boolean>, access: NewTokenRow, refresh: NewRefreshTokenRow): Promise<boolean> {
  try {
    await db.transaction().execute(async (trx) => {
      if (!(await claim(trx))) throw new NothingToClaim();
      await insertTokenPair(trx, access, refresh);
    });
    return true;
  } catch (error) {
    if (error instanceof NothingToClaim || isForeignKeyViolation(error)) return false;
    throw error;
  }
}

/** Thrown inside the transaction to roll it back when the code or token was claimed already. */
class NothingToClaim extends Error {}

export async function insertTokenPair(db: Q, access: NewTokenRow, refresh: NewRefreshTokenRow): Promise<void> {
  await insertAccessToken(db, ...tokenColumns(access));
  await insertRefreshToken(db, ...refreshTokenColumns(refresh));
}

function findAccessToken(db: Q, tokenHash: string): Promise<AccessTokenRow | undefined> {
  return db.selectFrom('access_tokens').selectAll().where('token_key', '=', tokenHash).executeTakeFirst();
}

export const selectRefreshToken = preparedQuery((db: Q, tokenHash: string) => db.selectFrom('refresh_tokens').selectAll().where('token_key', '=', tokenHash));

export async function findRefreshToken(db: Q, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return (await selectRefreshToken(db, tokenHash)).rows[0];
}

/**
 * Ends every access and refresh token descending from one authorization code. A family lives in
 * one grant; the rows are found through the grant_id index (there is none on family_id).
 *
 * A refresh racing this (another connection or process) must not leave a pair behind. So the
 * refresh tokens go first, and again until a DELETE finds none: a rotation either committed
 * before a DELETE read the table (its new pair is visible to the next statement), or finds its
 * token gone and writes nothing. Under READ COMMITTED a DELETE that waited for a rotation's row
 * lock does not see the row that rotation inserted, hence the repeat; once a DELETE removes
 * nothing, no rotation of the family is under way and none can start. The access tokens go last,
 * when every rotation that made one has committed. (In a transaction, a rotation that reaches a
 * deleted row waits for the commit, then finds nothing.)
 */
function deleteTokenFamily(db: Q, grantId: string, familyId: string): Promise<void> {
  return atomically(db, async (trx) => {
    let deleted: bigint;
    do {
      const result = await trx.deleteFrom('refresh_tokens').where('grant_id', '=', grantId).where('family_id', '=', familyId).executeTakeFirst();
      deleted = result.numDeletedRows;
    } while (deleted > 0n);
    await trx.deleteFrom('access_tokens').where('grant_id', '=', grantId).where('family_id', '=', familyId).execute();
  });
}

/**
 * Runs `work` in a transaction (or in the one `db` already is): a revocation of several
 * statements happens wholly or not at all, even if the process dies between them.
 */
export function atomically<T>(db: Q, work: (trx: Q) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

async function deleteAccessToken(db: Q, tokenHash: string): Promise<void> {
  await db.deleteFrom('access_tokens').where('token_key', '=', tokenHash).execute();
}

export interface TokenStore {
  findAccess(tokenHash: string): Promise<AccessTokenRow | undefined>;
  findRefresh(tokenHash: string): Promise<RefreshTokenRow | undefined>;
  deleteAccess(tokenHash: string): Promise<void>;
  /** Ends every access and refresh token descending from one authorization code. */
  deleteFamily(grantId: string, familyId: string): Promise<void>;
}

export function createTokenStore(db: Db): TokenStore {
  const q = db.kysely;
  return {
    findAccess: (tokenHash) => findAccessToken(q, tokenHash),
    findRefresh: (tokenHash) => findRefreshToken(q, tokenHash),
    deleteAccess: (tokenHash) => deleteAccessToken(q, tokenHash),
    deleteFamily: (grantId, familyId) => deleteTokenFamily(q, grantId, familyId),
  };
}
