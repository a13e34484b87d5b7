/**
 * `GET /v1/events` and `/v1/webhooks` with the app's own credentials (docs/webhooks.md): among
 * them, what a data event says — its local dates and one range per date, a few hundred bytes for a
 * day of sparse steps — and that events stored in the older shape read as they were.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import type { TestApp } from '../support/app.js';
import { createFixture, createOAuthTestApp, obtainTokens, REDIRECT_URI, type Fixture } from '../oauth/flow.js';
import { registerApp } from '../../src/domain/apps.js';
import { pageWith } from '../support/feed.js';
import { newEventId } from '../../src/store/events.js';
import { insertLegacyEventRow } from '../support/events.js';

cheapPasswordHashing();

forEachDialect('the apps\' event API', (dialect) => {
  let t: TestApp;
  let fixture: Fixture;
  let basic: string;
  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'false' });
    fixture = await createFixture(t);
    basic = `Basic ${Buffer.from(`${fixture.app.clientId}:${fixture.secret}`).toString('base64')}`;
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, authorization = basic) =>
    t.app.inject({ method, url, headers: { authorization, ...(payload !== undefined && { 'content-type': 'application/json' }) }, ...(payload !== undefined && { payload: JSON.stringify(payload) }) });

  it('serves the feed to the app, in the documented shape', async () => {
    await obtainTokens(t, fixture);
    const page = await pageWith(async () => {
      const response = await call('GET', '/v1/events?limit=10');
      assert.equal(response.statusCode, 200);
      return response.json() as { data: Array<{ type: string; data: { user_id: string } }>; next_cursor: string };
    }, (feed) => feed.data.length > 0);
    assert.deepEqual(Object.keys(page), ['data', 'next_cursor']);
    const [first] = page.data;
    assert.equal(first?.type, 'grant.created');
    assert.deepEqual(Object.keys(first), ['id', 'type', 'timestamp', 'data']);
    assert.equal(first.data.user_id, fixture.user.id);
    const next = (await call('GET', `/v1/events?after=${page.next_cursor}`)).json();
    assert.deepEqual(next, { data: [], next_cursor: page.next_cursor });
  });

  it('tells an app that reads the profile of a change through the API: exactly one profile.updated', async () => {
    const writer = await registerApp(t.database.stores.apps, t.clock, fixture.developer.id, { name: 'Profile Writer', redirectUris: [REDIRECT_URI], scopes: ['read_profile', 'write_profile'], isPublic: false });
    const writerBasic = `Basic ${Buffer.from(`${writer.app.clientId}:${writer.clientSecret}`).toString('base64')}`;
    const tokens = await obtainTokens(t, { ...fixture, app: writer.app, secret: writer.clientSecret! }, { scope: 'read_profile write_profile' });
    const put = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }, payload: '{"timezone": "Asia/Tokyo"}' });
    assert.equal(put.statusCode, 200);
    const profileEvents = (feed: { data: Array<{ type: string; data: unknown }> }) => feed.data.filter((event) => event.type === 'profile.updated');
    const feed = await pageWith(async () => (await call('GET', '/v1/events?limit=100', undefined, writerBasic)).json(), (page) => profileEvents(page).length > 0);
    assert.deepEqual(profileEvents(feed).map((event) => event.data), [{ user_id: fixture.user.id, fields: ['timezone'] }]);
  });

  it('refuses other credentials, public clients and bad parameters with clear errors', async () => {
    const noAuth = await t.app.inject({ method: 'GET', url: '/v1/events' });
    assert.equal(noAuth.statusCode, 401);
    assert.equal((await call('GET', '/v1/events', undefined, `Basic ${Buffer.from(`${fixture.app.clientId}:wrong`).toString('base64')}`)).statusCode, 401);
    const pub = await call('GET', '/v1/events', undefined, `Basic ${Buffer.from(`${fixture.publicApp.clientId}:`).toString('base64')}`);
    assert.equal(pub.statusCode, 401);
    assert.match(pub.json().error_description, /confidential client/);
    for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'after=', 'after=forged']) {
      const response = await call('GET', `/v1/events?${query}`);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error, 'invalid_request', query);
    }
  });

  it('lets the app add, change, rotate and delete its endpoints, and refuses bad input changing nothing', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ url: 'http://hooks.example.com/x', events: ['steps.updated'] }, /https/],
      [{ url: 'https://10.0.0.8/x', events: ['steps.updated'] }, /public address/],
      [{ url: 'https://hooks.example.com/x', events: [] }, /at least one event type/],
      [{ url: 'https://hooks.example.com/x', events: ['steps.deleted'] }, /unknown event type/],
      [{ events: ['steps.updated'] }, /url is required/],
      [[1, 2], /JSON object/],
    ];
    for (const [payload, message] of bad) {
      const response = await call('POST', '/v1/webhooks', payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.match(response.json().error_description, message);
    }
    assert.deepEqual((await call('GET', '/v1/webhooks')).json(), { data: [] }, 'nothing was made');

    const created = await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/stride', events: ['grant.revoked', 'steps.updated'] });
    assert.equal(created.statusCode, 200, 'success is always 200');
    const endpoint = created.json();
    assert.match(endpoint.secret, /^whsec_/);
    assert.equal(endpoint.state, 'unverified');
    assert.deepEqual(endpoint.events, ['steps.updated', 'grant.revoked']);
    const listed = (await call('GET', '/v1/webhooks')).json().data;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].secret, undefined, 'the secret is shown once');

    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { state: 'gone' })).statusCode, 400);
    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { url: 'https://127.0.0.1/x' })).statusCode, 400);
    const paused = await call('PATCH', `/v1/webhooks/${endpoint.id}`, { state: 'paused', events: ['profile.updated'] });
    assert.equal(paused.json().state, 'paused');
    assert.deepEqual(paused.json().events, ['profile.updated']);

    const rotated = (await call('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`)).json();
    assert.notEqual(rotated.secret, endpoint.secret);

    // Another app cannot see or touch it.
    const other = await registerApp(t.database.stores.apps, t.clock, fixture.developer.id, { name: 'Other', redirectUris: ['https://o.example/cb'], scopes: ['read_profile'], isPublic: false });
    const otherBasic = `Basic ${Buffer.from(`${other.app.clientId}:${other.clientSecret}`).toString('base64')}`;
    assert.equal((await call('DELETE', `/v1/webhooks/${endpoint.id}`, undefined, otherBasic)).statusCode, 404);
    const deleted = await call('DELETE', `/v1/webhooks/${endpoint.id}`);
    assert.equal(deleted.statusCode, 200, 'success is always 200');
    assert.deepEqual(deleted.json(), { id: endpoint.id, url: 'https://hooks.example.com/stride', events: ['profile.updated'], state: 'paused', created_at: endpoint.created_at, deleted: true });
    assert.equal((await call('DELETE', `/v1/webhooks/${endpoint.id}`)).statusCode, 404);
  });

  it('answers an endpoint id with a NUL as no such endpoint of this app: 404 for a change, a rotation and a deletion', async () => {
    // PostgreSQL refuses a NUL in a text value: an id with one that reached the lookup answered 500.
    const added = (await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/stride', events: ['steps.updated'] })).json() as { id: string };
    for (const id of ['%00', `${added.id}%00`, 'we_%00%1F']) {
      for (const [method, url, payload] of [['PATCH', `/v1/webhooks/${id}`, { state: 'paused' }], ['POST', `/v1/webhooks/${id}/rotate-secret`], ['DELETE', `/v1/webhooks/${id}`]] as const) {
        const response = await call(method, url, payload);
        assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
        assert.equal(response.json().error, 'not_found');
      }
    }
    assert.equal((await call('DELETE', `/v1/webhooks/${added.id}`)).statusCode, 200);
  });

  it('verifies a new URL before sending to it, also when the same change resumes a paused endpoint', async () => {
    const endpoint = (await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/verified', events: ['steps.updated'] })).json();
    // The endpoint answered its challenge, then its developer paused it.
    await t.database.db.kysely.updateTable('webhook_endpoints').set({ state: 'active', challenge: null }).where('id', '=', endpoint.id).execute();
    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { state: 'paused' })).json().state, 'paused');
    const moved = await call('PATCH', `/v1/webhooks/${endpoint.id}`, { url: 'https://elsewhere.example.org/anything', state: 'active' });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().state, 'unverified', 'nothing goes to the new URL before it answers its challenge');
    // Resumed alone, at the URL it answered for: active again at once. A new URL while it stays paused: verified when resumed.
    await t.database.db.kysely.updateTable('webhook_endpoints').set({ state: 'paused', challenge: null }).where('id', '=', endpoint.id).execute();
    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { state: 'active' })).json().state, 'active');
    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { state: 'paused' })).json().state, 'paused');
    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { url: 'https://third.example.org/x' })).json().state, 'paused');
    assert.equal((await call('PATCH', `/v1/webhooks/${endpoint.id}`, { state: 'active' })).json().state, 'unverified');
    assert.equal((await call('DELETE', `/v1/webhooks/${endpoint.id}`)).statusCode, 200);
  });

  /** The minutes of a sparse UTC day: every seventh minute or so between the anchors, each anchor a minute with steps. */
  const sparseDay = (day: number, anchors: number[]) => {
    const minutes = new Set(anchors.map((time) => time - day));
    for (let minute = 600; minute < 86_000; minute += 420 + (minute % 7) * 60) minutes.add(minute);
    return [...minutes].sort((a, b) => a - b).map((offset, i) => ({ start_time: day + offset, value: 20 + (i % 40) }));
  };
  const at = (iso: string) => Date.parse(iso) / 1000;

  it('tells a day of sparse steps in a small event: its local dates, one range per date (UTC, Europe/Berlin across a DST change, Asia/Kolkata)', async () => {
    const cases: Array<{ zone: string; day: string; anchors: string[]; dates: string[]; ranges: Array<[string, string]> }> = [
      { zone: 'UTC', day: '2026-03-10', anchors: ['2026-03-10T00:03:00Z', '2026-03-10T23:57:00Z'], dates: ['2026-03-10'], ranges: [['2026-03-10T00:03:00Z', '2026-03-10T23:58:00Z']] },
      // Berlin's 2026-03-29 has 23 hours: it ends at 22:00 UTC, when 2026-03-30 begins.
      {
        zone: 'Europe/Berlin',
        day: '2026-03-29',
        anchors: ['2026-03-29T00:03:00Z', '2026-03-29T21:59:00Z', '2026-03-29T22:00:00Z', '2026-03-29T23:57:00Z'],
        dates: ['2026-03-29', '2026-03-30'],
        ranges: [['2026-03-29T00:03:00Z', '2026-03-29T22:00:00Z'], ['2026-03-29T22:00:00Z', '2026-03-29T23:58:00Z']],
      },
      // Kolkata is UTC+05:30: its dates begin at 18:30 UTC.
      {
        zone: 'Asia/Kolkata',
        day: '2026-03-10',
        anchors: ['2026-03-10T00:03:00Z', '2026-03-10T18:29:00Z', '2026-03-10T18:30:00Z', '2026-03-10T23:57:00Z'],
        dates: ['2026-03-10', '2026-03-11'],
        ranges: [['2026-03-10T00:03:00Z', '2026-03-10T18:30:00Z'], ['2026-03-10T18:30:00Z', '2026-03-10T23:58:00Z']],
      },
    ];
    for (const { zone, day, anchors, dates, ranges } of cases) {
      const person = await createFixture(t);
      await t.database.stores.users.updateProfile(person.user.id, { timezone: zone }, t.clock());
      const tokens = await obtainTokens(t, person);
      const samples = sparseDay(at(`${day}T00:00:00Z`), anchors.map(at));
      const upload = await t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: { authorization: `Bearer ${tokens.access_token}` }, payload: { samples } });
      assert.equal(upload.statusCode, 200, upload.body);
      const personBasic = `Basic ${Buffer.from(`${person.app.clientId}:${person.secret}`).toString('base64')}`;
      type Feed = { data: Array<{ type: string; data: Record<string, unknown> }> };
      const stepsEvents = (feed: Feed) => feed.data.filter((event) => event.type === 'steps.updated');
      const feed = await pageWith(async () => (await call('GET', '/v1/events?limit=100', undefined, personBasic)).json() as Feed, (page) => stepsEvents(page).length > 0);
      const [event, ...more] = stepsEvents(feed);
      assert.equal(more.length, 0, zone);
      assert.deepEqual(event!.data, { user_id: person.user.id, ranges: ranges.map(([from, to]) => ({ start_time: at(from), end_time: at(to) })), dates }, zone);
      // More than a hundred runs of minutes, told in a few hundred bytes.
      const runs = samples.filter((sample, i) => i === 0 || sample.start_time !== samples[i - 1]!.start_time + 60).length;
      assert.ok(runs > 100, `${runs} runs`);
      const bytes = Buffer.byteLength(JSON.stringify(event));
      assert.ok(bytes <= 400, `${zone}: the event is ${bytes} bytes`);
    }
  });

  it('serves an event stored in the older shape, a range per run of minutes, as it was stored', async () => {
    const ranges = Array.from({ length: 300 }, (_, i) => ({ start_time: 1_773_100_800 + i * 240, end_time: 1_773_100_800 + i * 240 + 60 }));
    const stored = JSON.stringify({ user_id: fixture.user.id, ranges, dates: ['2026-03-10'] });
    const id = newEventId();
    // Kept as migration 022 keeps the rows it finds (test/db/migrations/022_compact_events.test.ts).
    await insertLegacyEventRow(t.database.db.kysely, { id, app_id: fixture.app.id, type: 'steps.updated', user_id: fixture.user.id, json: stored, created_at: t.clock() });
    type Feed = { data: Array<{ id: string; type: string; data: unknown }> };
    const feed = await pageWith(async () => (await call('GET', '/v1/events?limit=1000')).json() as Feed, (page) => page.data.some((event) => event.id === id));
    const event = feed.data.find((candidate) => candidate.id === id);
    assert.equal(event?.type, 'steps.updated');
    assert.deepEqual(event.data, JSON.parse(stored));
  });
});
