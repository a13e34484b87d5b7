/**
 * The event feed (src/store/event-feed.ts): every event once, in order, across pages, even while
 * transactions that write events commit out of order (PostgreSQL); the events of one change told
 * from one row (src/store/events.ts), a page ending between them; ids and cursors that say nothing
 * of the service's sequence (src/store/event-ids.ts), and the cursors of before still read.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { encodeEventData } from '../../src/db/codec/event-data.js';
import { storedUserId } from '../../src/db/event-rows.js';
import { eventIdsFrom, eventIdsOf } from '../../src/store/event-ids.js';
import { type FeedPage } from '../../src/store/event-feed.js';
import { recordEvents } from '../../src/store/events.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';
import { eventRows, insertEventRows } from '../support/events.js';

forEachDialect('the event feed', (dialect) => {
  let t: TestDatabase;
  let appId: string;
  let otherAppId: string;
  let owner: string;
  before(async () => {
    t = await createTestDatabase(dialect);
    owner = randomUUID();
    await t.db.kysely.insertInto('users').values({ id: owner, email: `${owner}@example.com`, password_hash: 'x', display_name: 'Dev', created_at: 0, updated_at: 0 }).execute();
    [appId, otherAppId] = [randomUUID(), randomUUID()];
    for (const id of [appId, otherAppId]) {
      await t.db.kysely
        .insertInto('apps')
        .values({ id, client_id: id.replaceAll('-', ''), client_secret_hash: null, owner_id: owner, name: 'App', redirect_uris: '["https://a.example/cb"]', scopes: 'read_activity', is_public: 0, created_at: 0, updated_at: 0 })
        .execute();
    }
  });
  after(() => t.drop());

  const insertEvents = async (app: string, count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 500) {
      const rows = Array.from({ length: Math.min(500, count - i) }, () => ({ app_id: app, type: 'steps.updated', user_id: 'u', data: {}, created_at: 1 }));
      ids.push(...(await insertEventRows(t.db.kysely, rows)));
    }
    return ids;
  };

  /**
   * Reads pages until `expected` events came (or, without it, until a page is empty). On
   * PostgreSQL a page also waits for transactions of other tests sharing the server, so reading
   * to a count polls briefly instead of trusting the first empty page.
   */
  const readAll = async (app: string, cursor: string | null, limit: number, expected?: number) => {
    const seen: string[] = [];
    const deadline = Date.now() + 5000;
    for (;;) {
      const page: FeedPage = (await t.stores.webhooks.feed(app, cursor, limit))!;
      seen.push(...page.data.map((event) => event.id));
      cursor = page.next_cursor;
      if (page.data.length > 0) continue;
      if (expected === undefined || seen.length >= expected || Date.now() > deadline) return { seen, cursor };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('pages through 10,000 events with no gap and no duplicate, while more are written', async () => {
    const first = await insertEvents(appId, 5000);
    await insertEvents(otherAppId, 50);
    const seen: string[] = [];
    let cursor: string | null = null;
    const writing = insertEvents(appId, 5000);
    let written: string[] | undefined;
    void writing.then((ids) => (written = ids));
    // Keep reading until the writer is done and a page comes back empty.
    for (;;) {
      const page: FeedPage = (await t.stores.webhooks.feed(appId, cursor, 333))!;
      seen.push(...page.data.map((event) => event.id));
      cursor = page.next_cursor;
      if (page.data.length === 0 && written) {
        const rest = await readAll(appId, cursor, 333, 10_000 - seen.length);
        seen.push(...rest.seen);
        break;
      }
    }
    assert.equal(seen.length, 10_000);
    assert.equal(new Set(seen).size, 10_000, 'no duplicate');
    assert.deepEqual(seen, [...first, ...written!], 'every event, in the order written');
  });

  it('gives an empty page and the same cursor when the app is up to date, and refuses a forged cursor', async () => {
    const { cursor } = await readAll(appId, null, 1000, 10_000);
    const page = (await t.stores.webhooks.feed(appId, cursor, 10))!;
    assert.deepEqual(page, { data: [], next_cursor: cursor }, 'nothing new');
    assert.equal(await t.stores.webhooks.feed(appId, 'not-a-cursor', 10), null);
    assert.equal(await t.stores.webhooks.feed(appId, Buffer.from('1.x').toString('base64url'), 10), null);
    assert.equal(await t.stores.webhooks.feed(appId, randomBytes(16).toString('base64url'), 10), null, 'sixteen bytes not enciphered here');
  });

  it('resumes from a cursor of before compact events (its txid and seq in the clear) where it left off', async () => {
    const ids = await insertEvents(appId, 6);
    const { cursor } = await readAll(appId, null, 1000, 10_006);
    const [third] = (await eventRows(t.db.kysely, { appId })).filter((row) => row.id === ids[2]);
    const txid =
      dialect === 'sqlite'
        ? '0'
        : (await sql<{ txid: string }>`select txid::text as txid from events where seq = ${third!.seq}`.execute(t.db.kysely)).rows[0]!.txid;
    const old = Buffer.from(`${txid}.${third!.seq}`).toString('base64url');
    const page = (await t.stores.webhooks.feed(appId, old, 10))!;
    assert.deepEqual(page.data.map((event) => event.id), ids.slice(3));
    assert.equal(page.next_cursor.length, 22, 'a new cursor: one enciphered block');
    assert.deepEqual((await t.stores.webhooks.feed(appId, page.next_cursor, 10))!.data, []);
    assert.equal(page.next_cursor, cursor, 'the same position, the same cursor');
  });

  it('ids and cursors say nothing of the sequence: no order, no arithmetic, another key another id', async () => {
    const ids = await insertEvents(otherAppId, 200);
    const hex = ids.map((id) => /^evt_([0-9a-f]{32})$/.exec(id)![1]!);
    const rising = hex.filter((id, i) => i > 0 && id > hex[i - 1]!).length;
    assert.ok(rising > 60 && rising < 140, `${rising} of 199 ids above the one before: as random`);
    const [row] = await eventRows(t.db.kysely, { appId: otherAppId, afterSeq: 0 });
    const key = (await t.db.kysely.selectFrom('server_secrets').select('value').where('name', '=', 'event_ids').executeTakeFirstOrThrow()).value;
    const mine = eventIdsFrom(Buffer.from(key, 'base64url'));
    assert.deepEqual(mine.ids([[row!.seq, 0]]), [row!.id], 'the id is the seq and the bit under this database\'s key');
    assert.notDeepEqual(eventIdsFrom(randomBytes(32)).ids([[row!.seq, 0]]), [row!.id], 'under another key, another id');
    const page = (await t.stores.webhooks.feed(otherAppId, null, 3))!;
    const cursor = Buffer.from(page.next_cursor, 'base64url');
    assert.ok(!cursor.toString('latin1').includes(String(row!.seq + 2)), 'the seq is not in the cursor');
    assert.equal(cursor.length, 16);
  });

  it('tells the events of one change from one row, in the order recorded, a page ending between them', async () => {
    const userId = randomUUID();
    await t.db.kysely.insertInto('users').values({ id: userId, email: `${userId}@example.com`, password_hash: 'x', display_name: 'P', created_at: 0, updated_at: 0 }).execute();
    const reader = randomUUID();
    await t.db.kysely
      .insertInto('apps')
      .values({ id: reader, client_id: reader.replaceAll('-', ''), client_secret_hash: null, owner_id: owner, name: 'Reader', redirect_uris: '["https://a.example/cb"]', scopes: 'read_activity', is_public: 0, created_at: 0, updated_at: 0 })
      .execute();
    await t.db.kysely.insertInto('grants').values({ id: randomUUID(), user_id: userId, app_id: reader, scope: 'read_activity', created_at: 0, updated_at: 0, last_used_at: null }).execute();
    const change = { ranges: [{ start_time: 1_774_742_580, end_time: 1_774_821_600 }], dates: ['2026-03-29'] };
    const event = (type: 'steps.updated' | 'distance.updated' | 'calories.updated', now: number) => ({ type, userId, data: change, now });
    await t.db.kysely.transaction().execute((trx) => recordEvents(trx, [event('steps.updated', 100), event('distance.updated', 100)], 0));
    // Not joined: another time; a type of a lower bit after a higher one.
    await t.db.kysely.transaction().execute((trx) => recordEvents(trx, [event('steps.updated', 101), event('distance.updated', 102), event('calories.updated', 102), event('steps.updated', 102)], 0));
    const rows = await t.db.kysely.selectFrom('events').select(['seq', 'types']).where('app_number', '=', (eb) => eb.selectFrom('apps').select('number').where('id', '=', reader)).orderBy('seq').execute();
    assert.deepEqual(rows.map((row) => Number(row.types)), [0b11, 0b1, 0b110, 0b1], 'steps and distance of one upload in one row, distance and calories too; steps after them a row of its own');

    const whole = (await readAll(reader, null, 100, 6)).seen;
    const told = (await t.stores.webhooks.feed(reader, null, 100))!.data;
    assert.deepEqual(told.map((e) => [e.type, e.timestamp]), [
      ['steps.updated', '1970-01-01T00:01:40.000Z'],
      ['distance.updated', '1970-01-01T00:01:40.000Z'],
      ['steps.updated', '1970-01-01T00:01:41.000Z'],
      ['distance.updated', '1970-01-01T00:01:42.000Z'],
      ['calories.updated', '1970-01-01T00:01:42.000Z'],
      ['steps.updated', '1970-01-01T00:01:42.000Z'],
    ]);
    for (const e of told) assert.deepEqual(e.data, { user_id: userId, ...change });
    assert.equal(new Set(whole).size, 6, 'an id of its own for each');
    const oneByOne = await readAll(reader, null, 1);
    assert.deepEqual(oneByOne.seen, whole, 'a page of one: each once, in order, through the middle of rows');
    const byTwo = await readAll(reader, null, 2);
    assert.deepEqual(byTwo.seen, whole);
  });

  if (dialect === 'postgres') {
    it('never passes an event whose transaction commits after a later one', async () => {
      const { cursor } = await readAll(appId, null, 1000, 10_006);
      const slow = await t.db.pool!.connect();
      try {
        await slow.query('begin');
        const inserted = await slow.query<{ seq: string }>(
          `insert into events (app_number, types, user_id, data, created_at) values ((select number from apps where id = $1), 1, $2, $3, 1) returning seq`,
          [appId, storedUserId('u'), encodeEventData([{}])],
        );
        const [late] = (await eventIdsOf(t.db.kysely)).ids([[Number(inserted.rows[0]!.seq), 0]]);
        const early = await insertEvents(appId, 3);
        const whileOpen = await readAll(appId, cursor, 10);
        assert.deepEqual(whileOpen.seen, [], 'nothing past a transaction still running');
        await slow.query('commit');
        const afterCommit = await readAll(appId, whileOpen.cursor, 10, 4);
        assert.deepEqual(afterCommit.seen, [late, ...early], 'in commit-safe order, none skipped');
      } finally {
        slow.release();
      }
    });
  }
});
