/**
 * Events and webhooks (docs/webhooks.md): the endpoints each app registers, the events of each
 * app (its feed, written in the transaction of the change that causes them), and the deliveries
 * of events to endpoints.
 */
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull())
    // unverified, active, paused or failing
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'bigint')
    // 1 while a secret made on the dashboard waits to be shown there, once.
    .addColumn('secret_unshown', 'integer', (c) => c.notNull().defaultTo(0))
    // The challenge of the verification under way, and when it is next sent.
    .addColumn('challenge', 'text')
    .addColumn('verify_at', 'bigint')
    .addColumn('verify_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('verify_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_app').on('webhook_endpoints').column('app_id').execute();

  // The feed's order: on PostgreSQL by the writing transaction's id, then seq, so that a page never
  // passes an event whose transaction has not committed yet (src/store/events.ts).
  await db.schema
    .createTable('events')
    .addColumn('seq', sqlite ? 'integer' : 'bigserial', (c) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .$call((t) => (sqlite ? t : t.addColumn('txid', sql`xid8`, (c) => c.notNull().defaultTo(sql`pg_current_xact_id()`))))
    // Random and never looked up (the feed pages by seq): no index of its own, which would cost a
    // random-order B-tree insert per event on every upload.
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_feed').on('events').columns(sqlite ? ['app_id', 'seq'] : ['app_id', 'txid', 'seq']).execute();
  await db.schema.createIndex('events_created').on('events').column('created_at').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    // pending, succeeded or failed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_latency_ms', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['webhook_deliveries', 'events', 'webhook_endpoints']) await db.schema.dropTable(table).ifExists().execute();
}
