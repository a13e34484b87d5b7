/**
 * A user's standing permissions for apps, as the account page shows and ends them (docs/oauth.md,
 * "When tokens stop working").
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { deleteGrantOfUser } from '../store/grants.js';

/**
 * The user revokes an app: the grant ends with every code and token issued under it (foreign-key
 * cascade), effective on the next request on every process. Returns false when there was none.
 */
export function revokeAppForUser(db: Kysely<Database>, userId: string, appId: string): Promise<boolean> {
  return deleteGrantOfUser(db, userId, appId);
}

export interface ConnectedApp {
  appId: string;
  clientId: string;
  name: string;
  developer: string;
  scopes: string[];
  grantedAt: number;
  lastUsedAt: number | null;
}

/** The apps a user has granted access to, newest first. */
export async function listConnectedApps(db: Kysely<Database>, userId: string): Promise<ConnectedApp[]> {
  const rows = await db
    .selectFrom('grants as g')
    .innerJoin('apps as a', 'a.id', 'g.app_id')
    .innerJoin('users as o', 'o.id', 'a.owner_id')
    .select(['a.id', 'a.client_id', 'a.name', 'o.display_name', 'g.scope', 'g.updated_at', 'g.last_used_at'])
    .where('g.user_id', '=', userId)
    .orderBy('g.updated_at', 'desc')
    .orderBy('a.id')
    .execute();
  return rows.map((row) => ({
    appId: row.id,
    clientId: row.client_id,
    name: row.name,
    developer: row.display_name,
    scopes: row.scope === '' ? [] : row.scope.split(' '),
    grantedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
  }));
}
