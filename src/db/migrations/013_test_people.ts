/**
 * Test people (docs/decisions/0024-test-people.md): accounts a developer made on the dashboard or
 * with `stride sandbox add`, flagged on the user row by the developer who owns them, and the state
 * of their made-up life (which life, its seed, the day it began, how far it has been synced).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The developer a test person belongs to; null for everyone else. A test person goes with them.
  await db.schema
    .alterTable('users')
    .addColumn('test_person_owner_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('users_test_person_owner').on('users').column('test_person_owner_id').execute();
  await db.schema
    .createTable('test_people')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    // office_worker, runner, night_shift_worker, traveller (domain/synthetic-person.ts).
    .addColumn('life', 'text', (c) => c.notNull())
    .addColumn('seed', 'integer', (c) => c.notNull())
    // The first local date of the person's data (ISO), where the traveller's move is counted from.
    .addColumn('first_date', 'text', (c) => c.notNull())
    // Data exists up to this time (exclusive); "Sync now" adds from here.
    .addColumn('synced_until', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
