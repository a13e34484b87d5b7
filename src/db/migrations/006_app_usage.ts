/**
 * What each app's developer sees of its use on the dashboard (docs/web.md, "App usage"): counters per
 * app, UTC day and metric, added to by every process, and the last errors the app caused.
 */
import { SqliteAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('app_usage')
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    // YYYY-MM-DD, UTC.
    .addColumn('day', 'text', (c) => c.notNull())
    // group.outcome (api_read.2xx, token.429, …), tokens.issued, tokens.refreshed, api.busiest_window.
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('app_usage_pk', ['app_id', 'day', 'metric'])
    .execute();
  await db.schema
    .createTable('app_usage_errors')
    .addColumn('id', sqlite ? 'integer' : 'bigserial', (c) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('app_usage_errors_app').on('app_usage_errors').columns(['app_id', 'id']).execute();
}
