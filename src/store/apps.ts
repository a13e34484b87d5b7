import type { Kysely, Selectable } from 'kysely';
import type { Db, Dialect } from '../db/database.js';
import type { AppTable, Database } from '../db/schema.js';

type Q = Kysely<Database>;
type AppRow = Selectable<AppTable>;

/** An app with its JSON/space-separated columns decoded. */
export interface App {
  id: string;
  clientId: string;
  clientSecretHash: string | null;
  ownerId: string;
  name: string;
  description: string;
  websiteUrl: string;
  redirectUris: string[];
  scopes: string[];
  isPublic: boolean;
  createdAt: number;
  updatedAt: number;
}

export function appFromRow(row: AppRow): App {
  return {
    id: row.id,
    clientId: row.client_id,
    clientSecretHash: row.client_secret_hash,
    ownerId: row.owner_id,
    name: row.name,
    description: row.description,
    websiteUrl: row.website_url,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    scopes: row.scopes === '' ? [] : row.scopes.split(' '),
    isPublic: row.is_public === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function insertApp(db: Q, app: App): Promise<void> {
  await db
    .insertInto('apps')
    .values({
      id: app.id,
      client_id: app.clientId,
      client_secret_hash: app.clientSecretHash,
      owner_id: app.ownerId,
      name: app.name,
      description: app.description,
      website_url: app.websiteUrl,
      redirect_uris: JSON.stringify(app.redirectUris),
      scopes: app.scopes.join(' '),
      is_public: app.isPublic ? 1 : 0,
      created_at: app.createdAt,
      updated_at: app.updatedAt,
    })
    .execute();
}

/**
 * RFC 6749 Appendix A.1: a client id is visible ASCII and spaces (VSCHAR). Nothing else names an
 * app, so nothing else is looked up — PostgreSQL refuses a NUL in a text value, and a statement
 * batched with other requests' would fail for all of them.
 */
export function isClientIdSyntax(clientId: string): boolean {
  return /^[\x20-\x7e]{1,255}$/.test(clientId);
}

export async function findAppByClientId(db: Q, clientId: string): Promise<App | undefined> {
  if (!isClientIdSyntax(clientId)) return undefined;
  const row = await db.selectFrom('apps').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  return row && appFromRow(row);
}

export const APP_COLUMNS =
  'id, client_id, client_secret_hash, owner_id, name, description, website_url, redirect_uris, scopes, is_public, created_at, updated_at';

const clientLookups = new WeakMap<Db, (clientId: string) => Promise<App | undefined>>();

/**
 * findAppByClientId for the client authentication of every token request and for every
 * authorization request (each page of a sign-in reads the app again): one statement prepared
 * once (SQLite: on the better-sqlite3 handle; PostgreSQL: by name). On SQLite, while a Kysely
 * transaction is open on the handle (it spans awaits), the lookup goes through Kysely, so it never
 * reads inside another request's transaction.
 */
export function appByClientIdLookup(db: Db): (clientId: string) => Promise<App | undefined> {
  let lookup = clientLookups.get(db);
  if (lookup === undefined) {
    const handle = db.sqlite;
    const pool = db.pool;
    if (handle) {
      const select = handle.prepare<[string], AppRow>(`SELECT ${APP_COLUMNS} FROM apps WHERE client_id = ?`);
      lookup = (clientId) => {
        if (handle.inTransaction) return findAppByClientId(db.kysely, clientId);
        const row = select.get(clientId);
        return Promise.resolve(row && appFromRow(row));
      };
    } else if (pool) {
      const text = `SELECT ${APP_COLUMNS} FROM apps WHERE client_id = $1`;
      lookup = async (clientId) => {
        const result = await pool.query<AppRow>({ name: 'stride_app_by_client_id', text, values: [clientId] });
        const row = result.rows[0];
        return row && appFromRow(row);
      };
    } else {
      lookup = (clientId) => findAppByClientId(db.kysely, clientId);
    }
    const byClientId = lookup;
    lookup = (clientId) => (isClientIdSyntax(clientId) ? byClientId(clientId) : Promise.resolve(undefined));
    clientLookups.set(db, lookup);
  }
  return lookup;
}

/**
 * An app's registered scopes for a consent being recorded, in its transaction. On PostgreSQL the
 * row is share-locked until the consent commits, so a developer's change of the scopes (an UPDATE
 * of the row) and the consent happen one after the other: the change ends the consent's grant if
 * its set differs, or the consent sees the new set. SQLite runs one write transaction at a time.
 */
export async function lockedAppScopes(db: Q, dialect: Dialect, appId: string): Promise<string[] | undefined> {
  let query = db.selectFrom('apps').select('scopes').where('id', '=', appId);
  if (dialect === 'postgres') query = query.forShare();
  const row = await query.executeTakeFirst();
  return row && (row.scopes === '' ? [] : row.scopes.split(' '));
}

/** App ids, like client ids, are visible ASCII: anything else (a NUL PostgreSQL would refuse) names no app. */
export function isAppIdSyntax(id: string): boolean {
  return isClientIdSyntax(id);
}

export async function findAppById(db: Q, id: string): Promise<App | undefined> {
  if (!isAppIdSyntax(id)) return undefined;
  const row = await db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
  return row && appFromRow(row);
}

export async function listApps(db: Q, ownerId?: string): Promise<App[]> {
  let query = db.selectFrom('apps').selectAll().orderBy('created_at').orderBy('id');
  if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
  return (await query.execute()).map(appFromRow);
}

export interface AppChanges {
  name?: string;
  description?: string;
  websiteUrl?: string;
  redirectUris?: string[];
  scopes?: string[];
  clientSecretHash?: string;
}

export async function updateApp(db: Q, id: string, changes: AppChanges, now: number): Promise<void> {
  await db
    .updateTable('apps')
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.websiteUrl !== undefined && { website_url: changes.websiteUrl }),
      ...(changes.redirectUris !== undefined && { redirect_uris: JSON.stringify(changes.redirectUris) }),
      ...(changes.scopes !== undefined && { scopes: changes.scopes.join(' ') }),
      ...(changes.clientSecretHash !== undefined && { client_secret_hash: changes.clientSecretHash }),
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/** Deleting an app cascades to its grants, codes and tokens (foreign keys ON DELETE CASCADE). */
export async function deleteApp(db: Q, id: string): Promise<void> {
  await db.deleteFrom('apps').where('id', '=', id).execute();
}
