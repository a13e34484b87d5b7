/**
 * Distance derived from steps (db/derived-distance.ts, store/distance-days.ts): a minute with steps
 * and no uploaded distance counts round(steps × stride_length_cm / 100) metres, with 75 cm for a
 * profile without a stride length; uploaded distance wins for its minute; a change of the stride
 * length, and every write of steps or distance, show in every granularity and zone.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { pageWith } from '../support/feed.js';
import { bearer, userWithToken } from '../support/tokens.js';
import { readMetric, removeRange, upload } from './sum-metrics-support.js';
import { utc } from './steps-support.js';
import { eventRows } from '../support/events.js';

const DAY = utc(2024, 4, 2);
/** 10:00 UTC, so that the hour is cut in Asia/Kolkata (its hours start at half past). */
const TEN = DAY + 10 * 3600;

forEachDialect('distance derived from steps', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 6, 1));
  });
  after(() => t.close());

  /**
   * The distance of the four minutes from 10:00 UTC, and of the hour and the day holding them, in
   * every way they can be read: whole days and hours (stored sums), and hours cut in half
   * (Asia/Kolkata, minutes derived while reading).
   */
  async function distanceRead(token: string) {
    const minutes = await readMetric(t, token, 'distance', { start_time: TEN, end_time: TEN + 240, granularity: 'minute', timezone: 'UTC' });
    const values = minutes.buckets.map((b) => b.value);
    const bucketAtTen = async (granularity: string, timezone: string) => {
      const series = await readMetric(t, token, 'distance', { start_time: DAY, end_time: DAY + 86_400, granularity, timezone });
      return series.buckets.find((b) => b.start_time <= TEN && b.end_time > TEN)!.value;
    };
    const days = [await bucketAtTen('day', 'UTC'), await bucketAtTen('day', 'Europe/Berlin'), await bucketAtTen('day', 'Asia/Kolkata')];
    const hours = [await bucketAtTen('hour', 'UTC'), await bucketAtTen('hour', 'Asia/Kolkata')];
    assert.equal(new Set(days).size, 1, `the days: ${days}`);
    assert.equal(new Set(hours).size, 1, `the hours: ${hours}`);
    assert.equal(hours[0], values.reduce((a, b) => a + b, 0), 'only those minutes in the hour');
    return { values, total: days[0]! };
  }

  const steps = [100, 3, 1, 0];
  const stepSamples = steps.map((value, i) => ({ start_time: TEN + i * 60, value }));

  it('derives metres from steps with 75 cm without a stride length, minute by minute rounded', async () => {
    const { token } = await userWithToken(t);
    await upload(t, token, 'steps', stepSamples);
    // 75, 2.25 → 2, 0.75 → 1, 0
    assert.deepEqual(await distanceRead(token), { values: [75, 2, 1, 0], total: 78 });
  });

  it('lets uploaded distance win over the derived distance of its minute, and a delete bring it back', async () => {
    const { user, token } = await userWithToken(t);
    await upload(t, token, 'steps', stepSamples);
    await upload(t, token, 'distance', [{ start_time: TEN + 60, value: 40 }, { start_time: TEN + 180, value: 0 }, { start_time: TEN + 3600, value: 5 }]);
    assert.deepEqual((await distanceRead(token)).values, [75, 40, 1, 0]);
    const day = await readMetric(t, token, 'distance', { start_time: DAY, end_time: DAY + 86_400, timezone: 'UTC' });
    assert.equal(day.total, 75 + 40 + 1 + 5);

    // Steps sent again under an uploaded minute change nothing there; elsewhere they do.
    await upload(t, token, 'steps', [{ start_time: TEN + 60, value: 900 }, { start_time: TEN + 120, value: 200 }]);
    assert.deepEqual((await distanceRead(token)).values, [75, 40, 150, 0]);

    const removed = await removeRange(t, token, 'distance', TEN, TEN + 3600);
    assert.deepEqual(removed.json(), { deleted: 2 }, 'the uploaded minutes, not those derived');
    assert.deepEqual((await distanceRead(token)).values, [75, 675, 150, 0]);
    assert.equal((await readMetric(t, token, 'distance', { start_time: DAY, end_time: DAY + 86_400, timezone: 'UTC' })).total, 75 + 675 + 150 + 5);

    // With the steps gone too, nothing of the day is left but the minute uploaded at 11:00.
    assert.deepEqual((await removeRange(t, token, 'steps', DAY, DAY + 86_400)).json(), { deleted: 4 });
    assert.deepEqual((await distanceRead(token)).values, [0, 0, 0, 0]);
    await removeRange(t, token, 'distance', DAY, DAY + 86_400);
    const rows = await t.database.db.kysely.selectFrom('series_days').select('metric').where('user_id', '=', user.id).execute();
    assert.deepEqual(rows, [], 'no row is left of an emptied day');
  });

  it('follows a change of the stride length in every granularity and zone', async () => {
    const { token } = await userWithToken(t);
    await upload(t, token, 'steps', stepSamples);
    await upload(t, token, 'distance', [{ start_time: TEN + 180, value: 9 }]);
    const put = async (stride: number | null) => {
      t.clock.advance(60); // the stride length may change once a minute
      const response = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { stride_length_cm: stride } });
      assert.equal(response.statusCode, 200, response.body);
    };
    await put(100);
    assert.deepEqual(await distanceRead(token), { values: [100, 3, 1, 9], total: 113 });
    await put(33);
    // 33, 0.99 → 1, 0.33 → 0
    assert.deepEqual(await distanceRead(token), { values: [33, 1, 0, 9], total: 43 });
    await put(null);
    assert.deepEqual(await distanceRead(token), { values: [75, 2, 1, 9], total: 87 });
  });

  it('keeps distance of steps uploaded over many days in step with a stride change, the history recomputed after the answer', async () => {
    const { user, token } = await userWithToken(t);
    const first = utc(2022, 6, 1);
    const samples = Array.from({ length: 700 }, (_, i) => ({ start_time: first + i * 86_400 + 12 * 3600, value: 10 + (i % 50) }));
    await upload(t, token, 'steps', samples);
    t.clock.advance(60);
    const response = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { stride_length_cm: 250 } });
    assert.equal(response.statusCode, 200);
    // What the answer left to do, carried on by the server (here: awaited).
    await t.database.stores.resumeStrideChanges(t.clock(), user.id);
    const series = await readMetric(t, token, 'distance', { start_time: first, end_time: first + 700 * 86_400, timezone: 'UTC' });
    assert.deepEqual(series.buckets.map((b) => b.value), samples.map((s) => Math.round((s.value * 250) / 100)));
  });

  it('refuses a second stride change within a minute with 429 and Retry-After, changing nothing', async () => {
    const { token } = await userWithToken(t);
    const put = (payload: object) => t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload });
    t.clock.advance(60);
    assert.equal((await put({ stride_length_cm: 80 })).statusCode, 200);
    t.clock.advance(20);
    const refused = await put({ stride_length_cm: 81, display_name: 'Not saved' });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json().error, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '40');
    const profile = (await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) })).json();
    assert.equal(profile.stride_length_cm, 80);
    assert.notEqual(profile.display_name, 'Not saved');
    // Other fields, and the stride it already has, change at any time.
    assert.equal((await put({ stride_length_cm: 80, display_name: 'Saved' })).statusCode, 200);
    t.clock.advance(40);
    assert.equal((await put({ stride_length_cm: 81 })).statusCode, 200);
  });

  it('tells the apps of distance.updated when steps change the distance', async () => {
    const { user, token } = await userWithToken(t);
    await upload(t, token, 'steps', stepSamples);
    const types = async () =>
      (await pageWith(
        () => eventRows(t.database.db.kysely, { userId: user.id }),
        (rows) => rows.length >= 2,
      )).map((row) => [row.type, JSON.parse(row.data)]);
    const range = { ranges: [{ start_time: TEN, end_time: TEN + 240 }], dates: ['2024-04-02'] };
    assert.deepEqual(await types(), [
      ['steps.updated', { user_id: user.id, ...range }],
      ['distance.updated', { user_id: user.id, ...range }],
    ]);
  });

  it('tells the apps of distance.updated when a stride change rewrites the distance of the days with steps', async () => {
    const { user, token } = await userWithToken(t, { timezone: 'Asia/Kolkata' });
    await upload(t, token, 'steps', [...stepSamples, { start_time: utc(2024, 4, 5, 20), value: 40 }]);
    const distanceEvents = async () =>
      (await eventRows(t.database.db.kysely, { userId: user.id, type: 'distance.updated' })).map((row) => JSON.parse(row.data));
    const before = (await distanceEvents()).length;
    const put = (payload: object) => t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload });
    t.clock.advance(60);
    assert.equal((await put({ stride_length_cm: 90 })).statusCode, 200);
    const events = await distanceEvents();
    assert.equal(events.length, before + 1);
    // One range from the first to the end of the last UTC day with steps (2 and 5 April), and the
    // local dates it starts and ends on in Kolkata (+05:30), whatever lies between.
    assert.deepEqual(events.at(-1), {
      user_id: user.id,
      ranges: [{ start_time: utc(2024, 4, 2), end_time: utc(2024, 4, 6) }],
      start_date: '2024-04-02',
      end_date: '2024-04-06',
      cause: 'stride_length',
    });
    // A profile change that keeps the stride says nothing of distance.
    assert.equal((await put({ display_name: 'Someone', stride_length_cm: 90 })).statusCode, 200);
    assert.equal((await distanceEvents()).length, before + 1);
  });
});
