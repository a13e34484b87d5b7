/**
 * 021_postgres_partitions: a PostgreSQL database at the schema before it, with day rows years back
 * and this month, events and deliveries over several days, keeps every row and every value, now in
 * partitions of its months and days (none left in the DEFAULT partitions); the feed's sequence goes
 * on where it was. SQLite's tables stay as they were.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { MIGRATIONS } from '../../../src/db/migrate.js';
import { partitionsOf } from '../../../src/db/partitions.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.js';

const DAY = 86_400;
const utc = (y: number, m: number, d: number, h = 0) => Date.UTC(y, m - 1, d, h) / 1000;

async function atSchemaBefore021(database: TestDatabase): Promise<Kysely<any>> {
  const db = database.db.kysely as Kysely<any>;
  await db.schema.createTable('stride_migrations').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
  for (const name of Object.keys(MIGRATIONS).sort().filter((n) => n < '021')) {
    await MIGRATIONS[name]!.up(db);
    await db.insertInto('stride_migrations').values({ name, applied_at: 0 }).execute();
  }
  return db;
}

async function fill(db: Kysely<any>): Promise<void> {
  for (const id of ['ann', 'bob']) {
    await db.insertInto('users').values({ id, email: `${id}@example.com`, password_hash: 'x', display_name: id, created_at: 1, updated_at: 1 }).execute();
  }
  await db.insertInto('apps').values({ id: 'app', client_id: 'client', owner_id: 'ann', name: 'App', redirect_uris: '[]', scopes: 'read_steps', created_at: 1, updated_at: 1 }).execute();
  const days = [];
  // Ann: a day every 9 days from 2019 (imported history) to late 2026; Bob: every day of two months.
  for (let at = utc(2019, 3, 1); at < utc(2026, 12, 1); at += 9 * DAY) {
    days.push({ user_id: 'ann', metric: 'steps', day_start: at, total: at % 9973, hours: Buffer.from([1, at % 251, 7]), minutes: Buffer.from([2, at % 13, 0, 255]) });
  }
  for (let at = utc(2026, 10, 1); at < utc(2026, 12, 1); at += DAY) {
    days.push({ user_id: 'bob', metric: 'heart_rate', day_start: at, total: 61, hours: Buffer.alloc(0), minutes: Buffer.from('minutes of bob') });
  }
  for (let i = 0; i < days.length; i += 500) await db.insertInto('series_days').values(days.slice(i, i + 500)).execute();
  const events = [];
  for (let at = utc(2026, 10, 20, 5); at < utc(2026, 11, 29); at += DAY / 3) {
    events.push({ id: `evt_${at}`, app_id: 'app', type: 'steps.updated', user_id: at % 2 ? 'ann' : null, data: JSON.stringify({ at }), created_at: at });
  }
  await db.insertInto('events').values(events).execute();
  await db.insertInto('webhook_endpoints').values({ id: 'we', app_id: 'app', url: 'https://app.example.test/hook', event_types: '*', state: 'active', secret: 's', created_at: 1, updated_at: 1 }).execute();
  const deliveries = events.filter((_, i) => i % 2 === 0).map((event, i) => ({
    id: `wd_${i}`, endpoint_id: 'we', event_id: event.id, type: event.type, user_id: event.user_id, payload: event.data,
    state: i % 5 === 0 ? 'pending' : 'succeeded', attempts: i % 3, next_attempt_at: event.created_at + 60, lease_until: null,
    last_attempt_at: i % 5 === 0 ? null : event.created_at + 1, last_status: i % 5 === 0 ? null : 200, last_error: null, last_latency_ms: i % 5 === 0 ? null : i, created_at: event.created_at,
  }));
  await db.insertInto('webhook_deliveries').values(deliveries).execute();
}

const ORDER: Record<string, string[]> = { series_days: ['user_id', 'metric', 'day_start'], events: ['seq'], webhook_deliveries: ['id'] };

async function snapshot(db: Kysely<any>) {
  const tables: Record<string, unknown[]> = {};
  for (const [table, order] of Object.entries(ORDER)) {
    let query = db.selectFrom(table).selectAll();
    for (const column of order) query = query.orderBy(column);
    tables[table] = await query.execute();
  }
  return tables;
}

if (DIALECTS.includes('postgres')) {
  describe('migration 021_postgres_partitions [postgres]', () => {
    let database: TestDatabase;
    before(async () => {
      database = await createTestDatabase('postgres', { migrate: false });
    });
    after(() => database.drop());

    it('keeps every row and value, in partitions of their months and days, and the feed goes on', async () => {
      const db = await atSchemaBefore021(database);
      await fill(db);
      const before = await snapshot(db);
      assert.ok(before.series_days!.length > 300 && before.events!.length > 100 && before.webhook_deliveries!.length > 50);

      // This migration alone: 022 rebuilds events again (test/db/migrations/022_compact_events.test.ts).
      await db.transaction().execute(async (trx) => {
        await MIGRATIONS['021_postgres_partitions']!.up(trx);
        await trx.insertInto('stride_migrations').values({ name: '021_postgres_partitions', applied_at: 0 }).execute();
      });

      assert.deepEqual(await snapshot(db), before);
      const kind = await sql<{ relname: string; relkind: string }>`
        select relname, relkind from pg_class where relnamespace = to_regnamespace(current_schema())::oid
        and relname in ('series_days', 'events', 'webhook_deliveries')`.execute(db);
      assert.deepEqual(kind.rows.map((r) => r.relkind), ['p', 'p', 'p'], 'partitioned tables');
      const months = await partitionsOf(db, 'series_days');
      assert.ok(months.includes('series_days_2019_03') && months.includes('series_days_2026_11') && months.includes('series_days_default'));
      assert.ok((await partitionsOf(db, 'events')).includes('events_2026_10_20'));
      assert.ok((await partitionsOf(db, 'webhook_deliveries')).includes('webhook_deliveries_2026_11_28'));
      for (const table of Object.keys(ORDER)) {
        const stray = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`${table}_default`)}`.execute(db);
        assert.equal(stray.rows[0]!.n, 0, `no row of ${table} left in its DEFAULT partition`);
      }
      // The sequence passed to the new table: the next event follows the last one.
      const last = Number((before.events!.at(-1) as { seq: string }).seq);
      const next = await db.insertInto('events').values({ id: 'evt_next', app_id: 'app', type: 'steps.updated', user_id: 'ann', data: '{}', created_at: utc(2026, 11, 29, 1) }).returning('seq').executeTakeFirstOrThrow();
      assert.equal(Number(next.seq), last + 1);
      // Keys hold: a day row written again is one row, whichever partition holds it; a user's removal cascades.
      await sql`insert into series_days values ('ann', 'steps', ${utc(2019, 3, 1)}, 5, '\\x00', '\\x00') on conflict (user_id, metric, day_start) do update set total = excluded.total`.execute(db);
      const annFirst = await db.selectFrom('series_days').select('total').where('user_id', '=', 'ann').where('day_start', '=', utc(2019, 3, 1)).execute();
      assert.deepEqual(annFirst.map((r) => Number(r.total)), [5]);
      await db.deleteFrom('users').where('id', '=', 'bob').execute();
      assert.equal((await db.selectFrom('series_days').select('user_id').where('user_id', '=', 'bob').execute()).length, 0);
    });
  });
}
