/** What the developer dashboard lists: an owner's apps and how many users each one is connected to. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { listApps, type App } from '../store/apps.js';

export interface DashboardApp extends App {
  /** Users holding a grant for the app (each has tokens until they revoke it). */
  connectedUsers: number;
}

export async function listOwnedApps(db: Kysely<Database>, ownerId: string): Promise<DashboardApp[]> {
  const apps = await listApps(db, ownerId);
  if (apps.length === 0) return [];
  const rows = await db
    .selectFrom('grants')
    .select(['app_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('app_id', 'in', apps.map((app) => app.id))
    .groupBy('app_id')
    .execute();
  const counts = new Map(rows.map((row) => [row.app_id, Number(row.n)]));
  return apps.map((app) => ({ ...app, connectedUsers: counts.get(app.id) ?? 0 }));
}

export async function countConnectedUsers(db: Kysely<Database>, appId: string): Promise<number> {
  const row = await db
    .selectFrom('grants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
