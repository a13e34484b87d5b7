/**
 * 022_compact_events: a database at the schema before it, with events of every type and shape
 * (the older ranges, a person whose id is not a UUID, none at all, JSON long enough for
 * PostgreSQL to compress it, text beyond ASCII) over several days, their webhook messages and a
 * Fitbit-compatible notification, keeps every event as apps saw it: the feed tells the same ids,
 * types, times and data in the same order, a cursor handed out before resumes where it was, the
 * messages still name their events, and the sequence goes on past the last seq ever given
 * (swept events included).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { MIGRATIONS, migrateToLatest } from '../../../src/db/migrate.js';
import { partitionsOf } from '../../../src/db/partitions.js';
import type { FeedEvent } from '../../../src/store/event-feed.js';
import { recordEvent } from '../../../src/store/events.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../../support/databases.js';
import { eventRows } from '../../support/events.js';
import { pageWith } from '../../support/feed.js';

const DAY = 86_400;
const utc = (y: number, m: number, d: number, h = 0) => Date.UTC(y, m - 1, d, h) / 1000;

const ANN = randomUUID();
const READER = randomUUID();
const OTHER = randomUUID();

async function atSchemaBefore022(database: TestDatabase): Promise<Kysely<any>> {
  const db = database.db.kysely as Kysely<any>;
  await db.schema.createTable('stride_migrations').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
  for (const name of Object.keys(MIGRATIONS).sort().filter((n) => n < '022')) {
    await MIGRATIONS[name]!.up(db);
    await db.insertInto('stride_migrations').values({ name, applied_at: 0 }).execute();
  }
  return db;
}

interface OldEvent {
  id: string;
  app_id: string;
  type: string;
  user_id: string | null;
  data: string;
  created_at: number;
}

/** Events as the feed of before told them, in its order. */
function oldEvents(): OldEvent[] {
  const events: OldEvent[] = [];
  const add = (app: string, type: string, userId: string | null, data: Record<string, unknown>, at: number) =>
    events.push({ id: `evt_${randomUUID().replaceAll('-', '')}`, app_id: app, type, user_id: userId, data: JSON.stringify(userId === null ? data : { user_id: userId, ...data }), created_at: at });
  let at = utc(2026, 10, 29, 5);
  for (let i = 0; i < 40; i++, at += DAY / 4) {
    const range = { start_time: at - 3600, end_time: at - 3600 + 60 * (i + 1) };
    add(READER, 'steps.updated', ANN, { ranges: [range], dates: ['2026-10-29'] }, at);
    add(READER, 'distance.updated', ANN, { ranges: [range], dates: ['2026-10-29'] }, at);
    if (i % 5 === 0) add(OTHER, 'heartrate.updated', 'legacy-person', { ranges: [range], dates: ['2026-10-29'] }, at);
  }
  // The older shape: a range per run of minutes, long enough to be compressed on PostgreSQL.
  const runs = Array.from({ length: 300 }, (_, i) => ({ start_time: 1_773_100_800 + i * 240, end_time: 1_773_100_800 + i * 240 + 60 }));
  add(READER, 'steps.updated', ANN, { ranges: runs, dates: ['2026-03-10'] }, at);
  add(READER, 'sleep.updated', ANN, { dates: ['2026-11-01'], ranges: [{ start_time: utc(2026, 10, 31, 22), end_time: utc(2026, 11, 1, 6) }] }, at + 1);
  add(READER, 'body.updated', ANN, { dates: ['2026-11-01'] }, at + 2);
  add(READER, 'profile.updated', ANN, { fields: ['display_name', 'timezone'], note: 'Zoë ✓ 🏃' }, at + 3);
  add(READER, 'grant.created', ANN, { scopes: ['read_activity', 'read_sleep'] }, at + 4);
  add(OTHER, 'grant.revoked', null, { reason: 'account_deleted' }, at + 5);
  add(READER, 'distance.updated', ANN, { ranges: [{ start_time: utc(2026, 10, 1), end_time: utc(2026, 11, 1) }], start_date: '2026-10-01', end_date: '2026-10-31', cause: 'stride_length' }, at + 6);
  // Swept since: its seq was given, and must never be given again.
  add(READER, 'body.updated', ANN, { dates: ['2026-11-02'] }, at + 7);
  return events;
}

async function fill(db: Kysely<any>): Promise<OldEvent[]> {
  for (const id of [ANN, 'legacy-person']) {
    await db.insertInto('users').values({ id, email: `${id}@example.com`, password_hash: 'x', display_name: id, created_at: 1, updated_at: 1 }).execute();
  }
  for (const [id, client] of [[READER, 'reader'], [OTHER, 'other']]) {
    await db.insertInto('apps').values({ id, client_id: client, owner_id: ANN, name: client, redirect_uris: '[]', scopes: 'read_activity', created_at: 1, updated_at: 1 }).execute();
  }
  const events = oldEvents();
  for (const event of events) await db.insertInto('events').values(event).execute();
  await db.insertInto('webhook_endpoints').values({ id: 'we_reader', app_id: READER, url: 'https://app.example.test/hook', event_types: 'steps.updated', state: 'active', secret: 's', created_at: 1, updated_at: 1 }).execute();
  const messages = events.filter((event) => event.app_id === READER && event.type === 'steps.updated').map((event, i) => ({
    id: `msg_${String(i).padStart(32, '0')}`, endpoint_id: 'we_reader', event_id: event.id, type: event.type, user_id: event.user_id,
    payload: JSON.stringify({ type: event.type, data: JSON.parse(event.data) }), state: i % 3 === 0 ? 'pending' : 'succeeded', attempts: 1, next_attempt_at: event.created_at, created_at: event.created_at,
  }));
  const fitbit = { ...messages[0]!, id: `msg_${'f'.repeat(32)}`, type: 'fitbit.activities', payload: '[{"collectionType":"activities","date":"2026-10-29"}]' };
  await db.insertInto('webhook_deliveries').values([...messages, fitbit]).execute();
  const swept = events[events.length - 1]!;
  await db.deleteFrom('events').where('id', '=', swept.id).execute();
  return events.slice(0, -1);
}

/** What the feed of `app` said before: events in order (PostgreSQL: by transaction, then seq), with their cursors. */
async function toldBefore(db: Kysely<any>, dialect: string, app: string): Promise<Array<FeedEvent & { cursor: string }>> {
  const sqlite = dialect === 'sqlite';
  const rows = await sql<{ id: string; type: string; data: string; created_at: number; seq: number; txid: string }>`
    select id, type, data, created_at, seq, ${sqlite ? sql`'0'` : sql`txid::text`} as txid
    from events where app_id = ${app} order by ${sqlite ? sql`seq` : sql`txid, seq`}`.execute(db);
  return rows.rows.map((row) => ({
    id: row.id,
    type: row.type,
    timestamp: new Date(Number(row.created_at) * 1000).toISOString(),
    data: JSON.parse(row.data) as Record<string, unknown>,
    cursor: Buffer.from(`${row.txid}.${row.seq}`).toString('base64url'),
  }));
}

forEachDialect('migration 022_compact_events', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('keeps every event as apps saw it: ids, order, data, cursors, messages; the sequence goes on', async () => {
    const db = await atSchemaBefore022(database);
    const stored = await fill(db);
    const before = { [READER]: await toldBefore(db, dialect, READER), [OTHER]: await toldBefore(db, dialect, OTHER) };
    assert.equal(before[READER]!.length + before[OTHER]!.length, stored.length);
    const deliveriesBefore = await db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();
    const highBefore =
      dialect === 'sqlite'
        ? Number((await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'events'`.execute(db)).rows[0]!.seq)
        : Number((await sql<{ seq: string }>`select last_value as seq from events_seq_seq`.execute(db)).rows[0]!.seq);

    assert.deepEqual((await migrateToLatest(database.db)).filter((name) => name < '023'), ['022_compact_events']);

    const feed = async (app: string, cursor: string | null, limit: number) => (await database.stores.webhooks.feed(app, cursor, limit))!;
    // On PostgreSQL the feed holds back while any older transaction is open on the server (other tests').
    await pageWith(() => feed(READER, before[READER]!.at(-2)!.cursor, 10), (page) => page.data.length > 0);
    for (const [app, told] of Object.entries(before)) {
      const all: FeedEvent[] = [];
      let cursor: string | null = null;
      for (;;) {
        const page = await feed(app, cursor, 7);
        if (page.data.length === 0) break;
        all.push(...page.data);
        cursor = page.next_cursor;
      }
      assert.deepEqual(all, told.map(({ cursor: _, ...event }) => event), `every event of ${app === READER ? 'the reader' : 'the other app'} as before`);
      // A cursor handed out before the upgrade resumes right after its event.
      for (const at of [0, Math.floor(told.length / 2), told.length - 2]) {
        const page = await feed(app, told[at]!.cursor, 3);
        assert.deepEqual(page.data.map((event) => event.id), told.slice(at + 1, at + 4).map((event) => event.id), `from the cursor of event ${at}`);
      }
    }
    assert.deepEqual(await db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute(), deliveriesBefore, 'messages untouched');
    const ids = new Set(before[READER]!.map((event) => event.id));
    for (const delivery of deliveriesBefore) assert.ok(ids.has(delivery.event_id), 'each message names an event still in the feed');
    if (dialect === 'postgres') {
      const days = await partitionsOf(db, 'events');
      assert.ok(days.includes('events_2026_10_29') && days.includes('events_2026_11_08') && days.includes('events_default'), days.join(' '));
      const stray = await sql<{ n: number }>`select count(*)::int as n from events_default`.execute(db);
      assert.equal(stray.rows[0]!.n, 0, 'every day in its partition');
      const indexes = await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'events' and schemaname = current_schema()`.execute(db);
      assert.deepEqual(indexes.rows.map((row) => row.name), ['events_feed']);
    } else {
      const indexes = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'events'`.execute(db);
      assert.deepEqual(indexes.rows.map((row) => row.name), ['events_feed']);
    }

    // The next event follows the last seq ever given, the swept one's too, and follows in the feed.
    const last = before[READER]!.at(-1)!.cursor;
    await db.insertInto('grants').values({ id: 'g', user_id: ANN, app_id: READER, scope: 'read_activity', created_at: 1, updated_at: 1, last_used_at: null }).execute();
    await database.db.kysely.transaction().execute((trx) => recordEvent(trx, { type: 'calories.updated', userId: ANN, data: { ranges: [], dates: [] }, now: utc(2026, 11, 29) }, 0));
    const [next] = await eventRows(database.db.kysely, { appId: READER, type: 'calories.updated' });
    assert.ok(next!.seq > highBefore, `seq ${next!.seq} after ${highBefore}`);
    const page = await pageWith(() => feed(READER, last, 10), (told) => told.data.length > 0);
    assert.deepEqual(page.data.map((event) => event.id), [next!.id]);
    assert.match(next!.id, /^evt_[0-9a-f]{32}$/, 'the shape of every id before');

    // Apps made after the upgrade are numbered too, and an app's removal takes its events.
    const later = randomUUID();
    await db.insertInto('apps').values({ id: later, client_id: 'later', owner_id: ANN, name: 'later', redirect_uris: '[]', scopes: 'read_activity', created_at: 1, updated_at: 1 }).execute();
    const numbers = await db.selectFrom('apps').select(['id', 'number']).execute();
    assert.equal(new Set(numbers.map((row: { number: number }) => Number(row.number))).size, 3);
    await db.deleteFrom('apps').where('id', '=', OTHER).execute();
    assert.deepEqual(await eventRows(database.db.kysely, { appId: OTHER }), []);
    assert.equal((await feed(OTHER, null, 10)).data.length, 0);
  });
});
