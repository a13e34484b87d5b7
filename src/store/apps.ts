import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { declareRead } from '../db/declared.js';
import type { AppTable, Database } from '../db/schema.js';
import { APP_COLUMN, CLIENT_READS } from './client-reads.js';
import { countGrantsWithOtherScope, deleteGrants } from './grants.js';
import { isId } from './identifiers.js';

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
  /** The grant types it may use at the token endpoint (docs/oauth.md, "Grant types per app"). */
  grantTypes: string[];
  /** Every token request must carry a DPoP proof (RFC 9449): the app gets no bearer tokens. */
  requireDpop: boolean;
  /** Authorization requests only through PAR (RFC 9126 §6). */
  requirePar: boolean;
  /** SHA-256 of the RFC 7592 registration access token; null unless registered through RFC 7591. */
  registrationTokenHash: string | null;
  /** RFC 7591 metadata kept only to be read back; null unless registered through RFC 7591. */
  registrationMetadata: Record<string, unknown> | null;
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
    grantTypes: row.grant_types.split(' ').filter((name) => name !== ''),
    requireDpop: row.require_dpop === 1,
    requirePar: row.require_par === 1,
    registrationTokenHash: row.registration_token_hash,
    registrationMetadata: row.registration_metadata === null ? null : (JSON.parse(row.registration_metadata) as Record<string, unknown>),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export const APP_COLUMNS =
  'id, client_id, client_secret_hash, owner_id, name, description, website_url, redirect_uris, scopes, is_public, require_dpop, created_at, updated_at, grant_types, require_par, registration_token_hash, registration_metadata';

export interface AppChanges {
  name?: string;
  description?: string;
  websiteUrl?: string;
  redirectUris?: string[];
  scopes?: string[];
  clientSecretHash?: string;
  grantTypes?: string[];
  requireDpop?: boolean;
  requirePar?: boolean;
  registrationTokenHash?: string | null;
  registrationMetadata?: Record<string, unknown> | null;
}

/** An app as the developer dashboard lists it. */
export interface AppWithUsers extends App {
  /** Users holding a grant for the app (each has tokens until they revoke it). */
  connectedUsers: number;
}

export interface AppStore {
  /** The app with this client id: the client authentication of every token request reads it. */
  findByClientId(clientId: string): Promise<App | undefined>;
  findById(id: string): Promise<App | undefined>;
  /** Every app, or an owner's, oldest first. */
  list(ownerId?: string): Promise<App[]>;
  listWithConnectedUsers(ownerId: string): Promise<AppWithUsers[]>;
  countConnectedUsers(appId: string): Promise<number>;
  /** Grants of an app whose scope set differs from `scope` (docs/oauth.md, "When tokens stop working"). */
  countGrantsWithOtherScope(appId: string, scope: string): Promise<number>;
  insert(app: App): Promise<void>;
  /**
   * Applies `changes` and, when `endGrantsNotOf` is a scope string, ends in the same transaction
   * every grant of the app whose scope set differs from it, with its codes and tokens. Returns
   * the app as changed and how many grants ended.
   */
  update(id: string, changes: AppChanges, now: number, endGrantsNotOf?: string): Promise<{ app: App | undefined; grantsEnded: number }>;
  /** Deletes an app with its grants, codes and tokens, all or nothing. */
  delete(id: string): Promise<void>;
}

export function createAppStore(db: Db): AppStore {
  const q = db.kysely;
  return {
    findByClientId: appByClientIdLookup(db),
    findById: (id) => findAppById(q, id),
    async list(ownerId) {
      let query = q.selectFrom('apps').selectAll().orderBy('created_at').orderBy('id');
      if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
      return (await query.execute()).map(appFromRow);
    },
    async listWithConnectedUsers(ownerId) {
      const apps = await this.list(ownerId);
      if (apps.length === 0) return [];
      const rows = await q
        .selectFrom('grants')
        .select(['app_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('app_id', 'in', apps.map((app) => app.id))
        .groupBy('app_id')
        .execute();
      const counts = new Map(rows.map((row) => [row.app_id, Number(row.n)]));
      return apps.map((app) => ({ ...app, connectedUsers: counts.get(app.id) ?? 0 }));
    },
    async countConnectedUsers(appId) {
      const row = await q.selectFrom('grants').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', appId).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    countGrantsWithOtherScope: (appId, scope) => countGrantsWithOtherScope(q, appId, scope),
    insert: (app) => insertApp(q, app),
    update: (id, changes, now, endGrantsNotOf) =>
      q.transaction().execute(async (trx) => {
        await updateApp(trx, id, changes, now);
        // An app that requires DPoP holds no bearer token (RFC 9449 §5.2): those issued before
        // end with the change. Its refresh tokens stay; refreshing now needs a proof (oauth/token.ts).
        if (changes.requireDpop === true) await deleteBearerAccessTokens(trx, id);
        const grantsEnded =
          endGrantsNotOf === undefined ? 0 : await deleteGrants(trx, { appId: id, scopeOtherThan: endGrantsNotOf }, { reason: 'scope_change', now });
        return { app: await findAppById(trx, id), grantsEnded };
      }),
    delete: (id) =>
      q.transaction().execute(async (trx) => {
        // The grants' codes and tokens first (deleteGrants): the cascade alone would lock the
        // grants before their tokens, the opposite order to a racing refresh, and could deadlock.
        await deleteGrants(trx, { appId: id });
        await trx.deleteFrom('apps').where('id', '=', id).execute();
      }),
  };
}

async function insertApp(db: Q, app: App): Promise<void> {
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
      grant_types: app.grantTypes.join(' '),
      require_dpop: app.requireDpop ? 1 : 0,
      require_par: app.requirePar ? 1 : 0,
      registration_token_hash: app.registrationTokenHash,
      registration_metadata: app.registrationMetadata === null ? null : JSON.stringify(app.registrationMetadata),
      created_at: app.createdAt,
      updated_at: app.updatedAt,
    })
    .execute();
}

export async function findAppByClientId(db: Q, clientId: string): Promise<App | undefined> {
  if (!isId('client', clientId)) return undefined;
  const row = await db.selectFrom('apps').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  return row && appFromRow(row);
}

async function findAppById(db: Q, id: string): Promise<App | undefined> {
  if (!isId('app', id)) return undefined;
  const row = await db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
  return row && appFromRow(row);
}

/**
 * findAppByClientId for the client authentication of every token request and for every
 * authorization request (each page of a sign-in reads the app again): one statement prepared
 * once (SQLite: kept on the read connection, with the other reads of the turn,
 * db/sqlite-executor.ts; PostgreSQL: by name, batched per turn with the refresh tokens read in it,
 * client-reads.ts).
 */
const APP_BY_CLIENT_ID = declareRead<[clientId: string], App, AppRow>({
  sqlite: `SELECT ${APP_COLUMNS} FROM apps WHERE client_id = ?`,
  rows: 'object',
  postgres: CLIENT_READS,
  parameters: ['client_id'],
  column: APP_COLUMN,
  decode: appFromRow,
});

function appByClientIdLookup(db: Db): (clientId: string) => Promise<App | undefined> {
  const lookup = db.executor.reader(APP_BY_CLIENT_ID);
  return (clientId) => (isId('client', clientId) ? lookup(clientId) : Promise.resolve(undefined));
}

/** The app's access tokens not bound to a DPoP key, found through its grants (both indexed). */
async function deleteBearerAccessTokens(db: Q, appId: string): Promise<void> {
  await db
    .deleteFrom('access_tokens')
    .where('grant_id', 'in', db.selectFrom('grants').select('id').where('app_id', '=', appId))
    .where('jkt', 'is', null)
    .execute();
}

async function updateApp(db: Q, id: string, changes: AppChanges, now: number): Promise<void> {
  await db
    .updateTable('apps')
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.websiteUrl !== undefined && { website_url: changes.websiteUrl }),
      ...(changes.redirectUris !== undefined && { redirect_uris: JSON.stringify(changes.redirectUris) }),
      ...(changes.scopes !== undefined && { scopes: changes.scopes.join(' ') }),
      ...(changes.clientSecretHash !== undefined && { client_secret_hash: changes.clientSecretHash }),
      ...(changes.grantTypes !== undefined && { grant_types: changes.grantTypes.join(' ') }),
      ...(changes.requireDpop !== undefined && { require_dpop: changes.requireDpop ? 1 : 0 }),
      ...(changes.requirePar !== undefined && { require_par: changes.requirePar ? 1 : 0 }),
      ...(changes.registrationTokenHash !== undefined && { registration_token_hash: changes.registrationTokenHash }),
      ...(changes.registrationMetadata !== undefined && {
        registration_metadata: changes.registrationMetadata === null ? null : JSON.stringify(changes.registrationMetadata),
      }),
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}
