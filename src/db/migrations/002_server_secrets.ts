/**
 * Secrets the server keeps for itself, shared by every process on the database and kept across
 * restarts (e.g. the key of the sign-in and sign-up CSRF tokens, docs/web.md). A row is made on
 * first use, not here, so a restored or copied database keeps its own.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('server_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('server_secrets').execute();
}
