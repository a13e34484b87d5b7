/** A database brought to just before the migration a test is about: every migration named before `before` applied and recorded. */
import type { Kysely } from 'kysely';
import { MIGRATIONS } from '../../src/db/migrate.js';

export async function applyMigrationsBefore(db: Kysely<any>, before: string): Promise<void> {
  await db.schema.createTable('stride_migrations').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
  for (const name of Object.keys(MIGRATIONS).sort().filter((name) => name < before)) {
    await MIGRATIONS[name]!.up(db);
    await db.insertInto('stride_migrations').values({ name, applied_at: 0 }).execute();
  }
}
