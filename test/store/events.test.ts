/**
 * The event feed (src/store/events.ts): every event once, in order, across pages, even while
 * transactions that write events commit out of order (PostgreSQL).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';
import { newEventId, type FeedPage } from '../../src/store/events.js';

forEachDialect('the event feed', (dialect) => {
  let t: TestDatabase;
  let appId: string;
  let otherAppId: string;
  before(async () => {
    t = await createTestDatabase(dialect);
    const owner = randomUUID();
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
    const ids = Array.from({ length: count }, () => newEventId());
    for (let i = 0; i < ids.length; i += 500) {
      const rows = ids.slice(i, i + 500).map((id) => ({ id, app_id: app, type: 'steps.updated', user_id: 'u', data: '{}', created_at: 1 }));
      await t.db.kysely.insertInto('events').values(rows).execute();
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
  });

  if (dialect === 'postgres') {
    it('never passes an event whose transaction commits after a later one', async () => {
      const { cursor } = await readAll(appId, null, 1000, 10_000);
      const slow = await t.db.pool!.connect();
      try {
        await slow.query('begin');
        const late = newEventId();
        await slow.query(`insert into events (id, app_id, type, user_id, data, created_at) values ($1, $2, 'steps.updated', 'u', '{}', 1)`, [late, appId]);
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
