import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { planBuckets, type Granularity } from '../../src/calendar/step-buckets.js';
import { heartRateSeriesJson } from '../../src/domain/heart-rate-series-json.js';
import { seriesRequestOf, type SeriesQuery } from '../../src/domain/step-series.js';
import { heartRateBuckets } from '../../src/store/heart-rate-series.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { pageWith } from '../support/feed.js';
import { bearer, createUser, issueAccessToken, userWithToken } from '../support/tokens.js';
import { applyUpload, expectedSeries, HEART_RATE, postReadings, readHeartRate, utc, type MinuteModel, type Reading } from './heartrate-support.js';

/** Deterministic readings every `every` seconds over [from, to), with gaps, drifting between 45 and 130. */
function readingsBetween(from: number, to: number, every: number, seed: number): Reading[] {
  const readings: Reading[] = [];
  let state = seed;
  const next = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  let bpm = 70;
  for (let time = from; time < to; time += every) {
    // An hour without data now and then (the watch on its charger).
    if (Math.floor(time / 3600) % 7 === seed % 7) continue;
    bpm = Math.max(45, Math.min(130, bpm + Math.round((next() - 0.5) * 6)));
    readings.push({ time: time + Math.floor(next() * Math.min(every, 60)), bpm });
  }
  return readings;
}

const storedDayCount = (t: TestApp, userId: string) =>
  t.database.db.kysely.selectFrom('series_days').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('metric', '=', 'heartrate').executeTakeFirstOrThrow().then((row) => Number(row.n));

forEachDialect('heart rate', (dialect) => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2025, 1, 1));
  });
  after(() => t.close());

  const post = (token: string, payload: unknown) => t.app.inject({ method: 'POST', url: HEART_RATE, headers: bearer(token), payload: payload as object });
  const remove = (token: string, query: string) => t.app.inject({ method: 'DELETE', url: `${HEART_RATE}/?${query}`, headers: bearer(token) });

  it('reads back what was uploaded by minute, hour and day in UTC, Europe/Berlin (both DST changes) and Asia/Kolkata', async () => {
    const { token } = await userWithToken(t);
    const model: MinuteModel = new Map();
    // Three days around each of Berlin's changes of 2024 (31 March, 27 October), readings every 20 s.
    for (const [from, to] of [[utc(2024, 3, 30), utc(2024, 4, 2)], [utc(2024, 10, 26), utc(2024, 10, 29)]] as const) {
      const readings = readingsBetween(from, to, 20, from % 97);
      for (let i = 0; i < readings.length; i += 20_000) {
        const batch = readings.slice(i, i + 20_000);
        assert.deepEqual(await postReadings(t, token, batch), { accepted: batch.length });
        applyUpload(model, batch);
      }
    }
    const check = async (zone: string, granularity: Granularity, start: number, end: number) => {
      const series = await readHeartRate(t, token, { start_time: start, end_time: end, granularity, timezone: zone });
      assert.equal(series.timezone, zone);
      assert.deepEqual(series.heartrate, expectedSeries(model, zone, granularity, start, end), `${zone} ${granularity} ${start}`);
      return series;
    };
    for (const zone of ['UTC', 'Europe/Berlin', 'Asia/Kolkata']) {
      for (const [from, to] of [[utc(2024, 3, 30), utc(2024, 4, 2)], [utc(2024, 10, 26), utc(2024, 10, 29)]] as const) {
        await check(zone, 'day', from, to);
        await check(zone, 'hour', from, to);
        await check(zone, 'minute', from + 86_400 - 3 * 3600, from + 2 * 86_400 - 3 * 3600);
      }
    }
    const spring = await check('Europe/Berlin', 'day', utc(2024, 3, 31), utc(2024, 3, 31, 12));
    assert.deepEqual(spring.heartrate.map((b) => b.end_time - b.start_time), [23 * 3600]);
    const autumn = await check('Europe/Berlin', 'hour', utc(2024, 10, 26, 22), utc(2024, 10, 27, 23));
    assert.equal(autumn.heartrate.length, 25);
    assert.ok(autumn.heartrate.some((b) => b.minutes > 0) && autumn.heartrate.some((b) => b.minutes === 0 && b.avg === null));
    // Day buckets carry resting; hour and minute buckets do not.
    assert.ok(spring.heartrate.every((b) => 'resting' in b));
    assert.ok(autumn.heartrate.every((b) => !('resting' in b)));
  });

  it('answers an empty range and a range without data densely, with nulls', async () => {
    const { token } = await userWithToken(t, { timezone: 'Asia/Kolkata' });
    const series = await readHeartRate(t, token, { start_time: utc(2024, 5, 1), end_time: utc(2024, 5, 3) });
    assert.equal(series.granularity, 'day');
    assert.equal(series.timezone, 'Asia/Kolkata');
    assert.equal(series.heartrate.length, 3);
    for (const bucket of series.heartrate) assert.deepEqual({ ...bucket, start_time: 0, end_time: 0 }, { start_time: 0, end_time: 0, avg: null, min: null, max: null, minutes: 0, resting: null });
    const empty = await readHeartRate(t, token, { start_time: utc(2024, 5, 1), end_time: utc(2024, 5, 1) });
    assert.deepEqual(empty.heartrate, []);
  });

  it('replaces what a minute held with the readings of a later upload in that minute', async () => {
    const { token } = await userWithToken(t);
    const minute = utc(2024, 6, 1, 10, 5);
    await postReadings(t, token, [{ time: minute, bpm: 60 }, { time: minute + 10, bpm: 100 }, { time: minute + 59, bpm: 71 }, { time: minute + 60, bpm: 90 }]);
    let series = await readHeartRate(t, token, { start_time: minute, end_time: minute + 120, granularity: 'minute' });
    assert.deepEqual(series.heartrate.map(({ avg, min, max, minutes }) => ({ avg, min, max, minutes })), [
      { avg: 77, min: 60, max: 100, minutes: 1 },
      { avg: 90, min: 90, max: 90, minutes: 1 },
    ]);
    // A re-sync of the first minute: lower max, higher min; the second minute is left alone.
    await postReadings(t, token, [{ time: minute + 30, bpm: 66 }, { time: minute + 31, bpm: 67 }]);
    series = await readHeartRate(t, token, { start_time: minute, end_time: minute + 120, granularity: 'minute' });
    assert.deepEqual(series.heartrate.map(({ avg, min, max, minutes }) => ({ avg, min, max, minutes })), [
      { avg: 67, min: 66, max: 67, minutes: 1 },
      { avg: 90, min: 90, max: 90, minutes: 1 },
    ]);
    const hour = await readHeartRate(t, token, { start_time: minute, end_time: minute + 60, granularity: 'hour' });
    assert.deepEqual(hour.heartrate.map(({ avg, min, max, minutes }) => ({ avg, min, max, minutes })), [{ avg: 78.5, min: 66, max: 90, minutes: 2 }]);
  });

  it('finds the resting heart rate as the lowest half hour with 20 minutes of data, per local day', async () => {
    const { token } = await userWithToken(t);
    const day = utc(2024, 7, 10);
    const readings: Reading[] = [];
    // 70 all day, minute readings.
    for (let m = 0; m < 1440; m++) readings.push({ time: day + m * 60, bpm: 70 });
    // 02:15–02:45: 55 (a half hour starting on a quarter hour).
    for (let m = 135; m < 165; m++) readings[m] = { time: day + m * 60, bpm: 55 };
    // 05:00–05:30 at 40, but only 19 minutes hold data there: it does not count.
    for (let m = 300; m < 330; m++) readings[m] = m < 319 ? { time: day + m * 60, bpm: 40 } : { time: -1, bpm: 0 };
    // 08:07–08:37: 50 — not on a quarter hour, so the lowest half hour holds part of it:
    // 08:00–08:30, 23 minutes of 50 and 7 of 70 (08:15–08:45 has 22 and 8).
    for (let m = 487; m < 517; m++) readings[m] = { time: day + m * 60, bpm: 50 };
    await postReadings(t, token, readings.filter((r) => r.time >= 0));
    const [utcDay] = (await readHeartRate(t, token, { start_time: day, end_time: day + 86_400 - 1, timezone: 'UTC' })).heartrate;
    assert.equal(utcDay!.resting, Math.round(((23 * 50 + 7 * 70) / 30) * 10) / 10);
    assert.equal(utcDay!.min, 40);
    assert.equal(utcDay!.minutes, 1440 - 11);

    // Too little data: a day of 19 minutes.
    const sparse = day + 5 * 86_400;
    await postReadings(t, token, Array.from({ length: 19 }, (_, m) => ({ time: sparse + 600 + m * 60, bpm: 50 })));
    const [sparseDay] = (await readHeartRate(t, token, { start_time: sparse, end_time: sparse + 3600, timezone: 'UTC' })).heartrate;
    assert.equal(sparseDay!.minutes, 19);
    assert.equal(sparseDay!.resting, null);

    // A local day: the Berlin day of 11 July 2024 (22:00 UTC on the 10th to 22:00 on the 11th)
    // holds a low half hour around UTC midnight, 23:45–00:15.
    const next = day + 86_400;
    const night: Reading[] = [];
    for (let m = -120; m < 120; m++) night.push({ time: next + m * 60, bpm: m >= -15 && m < 15 ? 45 : 72 });
    await postReadings(t, token, night);
    const berlin = await readHeartRate(t, token, { start_time: utc(2024, 7, 10, 22), end_time: utc(2024, 7, 11, 21), timezone: 'Europe/Berlin' });
    assert.equal(berlin.heartrate.length, 1);
    assert.equal(berlin.heartrate[0]!.resting, 45);
    const utcDays = await readHeartRate(t, token, { start_time: day, end_time: next + 3600, timezone: 'UTC' });
    assert.notEqual(utcDays.heartrate[1]!.resting, 45, 'in UTC the half hour is cut by midnight');
  });

  it('deletes a range of minutes, counting those that held data, and reads them as gone', async () => {
    const { user, token } = await userWithToken(t);
    const day = utc(2024, 8, 1);
    await postReadings(t, token, Array.from({ length: 600 }, (_, m) => ({ time: day + 3600 + m * 60, bpm: 60 + (m % 30) })));
    await postReadings(t, token, [{ time: day + 86_400 + 30, bpm: 80 }]);
    assert.equal(await storedDayCount(t, user.id), 2);

    let response = await remove(token, `start_time=${day + 7200 + 1}&end_time=${day + 3 * 3600}`);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { deleted: 59 }, 'minutes starting in [02:00:01, 03:00)');
    let [bucket] = (await readHeartRate(t, token, { start_time: day, end_time: day + 86_400 - 1, timezone: 'UTC' })).heartrate;
    assert.equal(bucket!.minutes, 600 - 59);

    response = await remove(token, `start_time=${day + 7200 + 1}&end_time=${day + 3 * 3600}`);
    assert.deepEqual(response.json(), { deleted: 0 }, 'nothing is left there');

    // The rest of both days: the rows go.
    response = await remove(token, `start_time=${day}&end_time=${day + 2 * 86_400}`);
    assert.deepEqual(response.json(), { deleted: 600 - 59 + 1 });
    assert.equal(await storedDayCount(t, user.id), 0);
    [bucket] = (await readHeartRate(t, token, { start_time: day, end_time: day + 86_400 - 1, timezone: 'UTC' })).heartrate;
    assert.deepEqual([bucket!.minutes, bucket!.avg, bucket!.resting], [0, null, null]);
  });

  it('refuses a bad DELETE range with 400 naming it, removing nothing', async () => {
    const { user, token } = await userWithToken(t);
    const day = utc(2024, 8, 1);
    await postReadings(t, token, [{ time: day, bpm: 70 }]);
    const cases: Array<[string, RegExp]> = [
      [`start_time=${day}`, /querystring\/end_time is required/],
      [`start_time=${day}&end_time=abc`, /querystring\/end_time must be integer/],
      [`start_time=-5&end_time=${day}`, /querystring\/start_time must be >= 0/],
      [`start_time=${day}&end_time=${day - 1}`, /end_time \d+ is before start_time/],
      [`start_time=${day}&end_time=${day + 31 * 86_400 + 1}`, /longer than 31 days/],
      [`start_time=${day}&end_time=${day + 60}&granularity=day`, /querystring\/granularity is not a known field/],
    ];
    for (const [query, description] of cases) {
      const response = await remove(token, query);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description);
    }
    assert.equal(await storedDayCount(t, user.id), 1);
    assert.deepEqual((await remove(token, `start_time=${day}&end_time=${day + 31 * 86_400}`)).json(), { deleted: 1 });
  });

  it('refuses a bad upload with 400 naming the field, writing nothing', async () => {
    const { user, token } = await userWithToken(t);
    const time = utc(2024, 9, 1);
    const good = Array.from({ length: 10 }, (_, i) => ({ time: time + i * 7, bpm: 70 }));
    const cases: Array<[unknown, RegExp]> = [
      [{ time, bpm: 251 }, /^body\/samples\/3\/bpm must be <= 250/],
      [{ time, bpm: 24 }, /^body\/samples\/3\/bpm must be >= 25/],
      [{ time, bpm: 70.5 }, /^body\/samples\/3\/bpm must be integer/],
      [{ time, bpm: '70' }, /^body\/samples\/3\/bpm must be integer/],
      [{ time: -1, bpm: 70 }, /^body\/samples\/3\/time must be >= 0/],
      [{ time: time + 0.5, bpm: 70 }, /^body\/samples\/3\/time must be integer/],
      [{ bpm: 70 }, /^body\/samples\/3\/time is required/],
      [{ time, bpm: 70, device: 'x' }, /^body\/samples\/3\/device is not a known field/],
      [{ time: t.clock() + 86_401, bpm: 70 }, /^body\/samples\/3\/time is more than a day ahead of the server's clock; nothing was written/],
      [null, /^body\/samples\/3 must be object/],
    ];
    for (const [bad, description] of cases) {
      const response = await post(token, { samples: [...good.slice(0, 3), bad, ...good.slice(3)] });
      assert.equal(response.statusCode, 400, JSON.stringify(bad));
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description);
    }
    for (const [payload, description] of [
      [{}, /^body\/samples is required/],
      [{ samples: good, extra: 1 }, /^body\/extra is not a known field/],
      [[good[0]], /^body must be object/],
    ] as Array<[unknown, RegExp]>) {
      const response = await post(token, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.match(response.json().error_description, description);
    }
    const text = await t.app.inject({ method: 'POST', url: HEART_RATE, headers: { ...bearer(token), 'content-type': 'text/plain' }, payload: 'x' });
    assert.equal(text.statusCode, 415);
    assert.equal(await storedDayCount(t, user.id), 0);
  });

  it('accepts a day of readings once a second (86,400) and refuses 86,401 without writing any', async () => {
    const { user, token } = await userWithToken(t);
    const day = utc(2024, 9, 2);
    const readings = Array.from({ length: 86_401 }, (_, i) => ({ time: day + i, bpm: 60 + (i % 61) }));
    const tooMany = await post(token, { samples: readings });
    assert.equal(tooMany.statusCode, 400);
    assert.match(tooMany.json().error_description, /^body\/samples must NOT have more than 86400 items/);
    assert.equal(await storedDayCount(t, user.id), 0);
    assert.deepEqual(await postReadings(t, token, readings.slice(0, 86_400)), { accepted: 86_400 });
    const [bucket] = (await readHeartRate(t, token, { start_time: day, end_time: day + 86_399, timezone: 'UTC' })).heartrate;
    assert.deepEqual([bucket!.minutes, bucket!.min, bucket!.max], [1440, 60, 120]);
  });

  it('records heartrate.updated for apps that may read heart rate, with the local dates written and a range per date', async () => {
    const user = await createUser(t, { timezone: 'America/New_York' });
    const writer = await issueAccessToken(t, user, ['write_heartrate', 'read_heartrate']);
    const activityOnly = await issueAccessToken(t, user, ['read_activity']);
    const minute = utc(2024, 10, 1, 3, 59);
    await postReadings(t, writer.token, [{ time: minute + 5, bpm: 70 }, { time: minute + 65, bpm: 71 }, { time: minute + 300, bpm: 72 }]);
    const deleted = await remove(writer.token, `start_time=${minute}&end_time=${minute + 120}`);
    assert.deepEqual(deleted.json(), { deleted: 2 });
    await remove(writer.token, `start_time=${minute}&end_time=${minute + 120}`);
    const feed = await pageWith(
      async () => (await t.database.stores.webhooks.feed(writer.appId, null, 100))!,
      (page) => page.data.filter((event) => event.type === 'heartrate.updated').length >= 2,
    );
    const events = feed.data.filter((event) => event.type === 'heartrate.updated').map((event) => event.data);
    assert.deepEqual(events, [
      // New York's 2024-10-01 begins at 04:00 UTC, a minute after `minute`: a range per local date.
      { user_id: user.id, ranges: [{ start_time: minute, end_time: minute + 60 }, { start_time: minute + 60, end_time: minute + 360 }], dates: ['2024-09-30', '2024-10-01'] },
      { user_id: user.id, ranges: [{ start_time: minute, end_time: minute + 60 }, { start_time: minute + 60, end_time: minute + 120 }], dates: ['2024-09-30', '2024-10-01'] },
    ], 'one per write that changed something');
    const other = await t.database.stores.webhooks.feed(activityOnly.appId, null, 100);
    assert.deepEqual(other!.data.filter((event) => event.type === 'heartrate.updated'), []);
  });

  it('keeps every minute of uploads to one day made at the same moment', async () => {
    const { token } = await userWithToken(t);
    const day = utc(2024, 11, 5);
    const uploads = Array.from({ length: 6 }, (_, u) =>
      Array.from({ length: 240 }, (_, i) => ({ time: day + (u * 240 + i) * 60 + 15, bpm: 50 + u * 10 })));
    await Promise.all(uploads.map((readings) => postReadings(t, token, readings)));
    const series = await readHeartRate(t, token, { start_time: day, end_time: day + 86_400, granularity: 'hour', timezone: 'UTC' });
    assert.deepEqual(series.heartrate.map((b) => b.minutes), new Array(24).fill(60));
    assert.deepEqual(series.heartrate.map((b) => b.avg), Array.from({ length: 24 }, (_, h) => 50 + Math.floor(h / 4) * 10));
  });

  it('sends a kept answer again only while the stored days are unchanged: an upload, a deletion, a zone change, another user', async () => {
    const alice = await userWithToken(t, { timezone: 'Europe/Berlin' });
    const bob = await userWithToken(t, { timezone: 'Europe/Berlin' });
    const day = utc(2024, 12, 10);
    const readings = readingsBetween(day - 3 * 3600, day + 86_400 + 3 * 3600, 30, 5);
    const models = new Map<string, MinuteModel>([[alice.user.id, new Map()], [bob.user.id, new Map()]]);
    for (const who of [alice, bob]) {
      await postReadings(t, who.token, readings);
      applyUpload(models.get(who.user.id)!, readings);
    }
    const byMinute = { start_time: String(day), end_time: String(day + 86_400), granularity: 'minute' };
    const byDay = { start_time: String(day), end_time: String(day + 86_400) };
    // The bytes of each answer, checked against the model and against the writer without kept answers.
    const answer = async (who: typeof alice, query: Record<string, string>, zone: string) => {
      const response = await t.app.inject({ method: 'GET', url: `${HEART_RATE}?${new URLSearchParams(query)}`, headers: bearer(who.token) });
      assert.equal(response.statusCode, 200, response.body);
      const request = seriesRequestOf(query as SeriesQuery, zone, t.clock());
      const plan = planBuckets(request.timezone, request.granularity, request.start, request.end);
      const written = heartRateSeriesJson(request, plan, await heartRateBuckets(t.database.stores.heartRate.readDays, who.user.id, plan));
      assert.equal(response.body, written.toString('utf8'), `${zone} ${request.granularity}`);
      const series = response.json() as { timezone: string; heartrate: unknown[] };
      assert.equal(series.timezone, zone);
      assert.deepEqual(series.heartrate, expectedSeries(models.get(who.user.id)!, zone, request.granularity, request.start, request.end));
      return response.body;
    };

    const first = await answer(alice, byMinute, 'Europe/Berlin');
    assert.equal(await answer(alice, byMinute, 'Europe/Berlin'), first, 'the same days: the same bytes');
    const firstDays = await answer(alice, byDay, 'Europe/Berlin');
    assert.equal(await answer(bob, byMinute, 'Europe/Berlin'), first, 'equal data, equal answer');

    // An upload replacing one minute of Alice's: her answers change, Bob's do not.
    const minute = day + 12 * 3600 + 7 * 60;
    const replacement = [{ time: minute + 5, bpm: 131 }, { time: minute + 40, bpm: 133 }];
    await postReadings(t, alice.token, replacement);
    applyUpload(models.get(alice.user.id)!, replacement);
    const replaced = await answer(alice, byMinute, 'Europe/Berlin');
    assert.notEqual(replaced, first);
    assert.notEqual(await answer(alice, byDay, 'Europe/Berlin'), firstDays);
    assert.equal(await answer(bob, byMinute, 'Europe/Berlin'), first);
    assert.equal(await answer(alice, byMinute, 'Europe/Berlin'), replaced);

    // A deletion of the same minute and the two around it.
    const removed = await remove(alice.token, `start_time=${minute - 60}&end_time=${minute + 120}`);
    assert.equal(removed.statusCode, 200, removed.body);
    for (const m of [minute - 60, minute, minute + 60]) models.get(alice.user.id)!.delete(m);
    assert.notEqual(await answer(alice, byMinute, 'Europe/Berlin'), replaced);

    // A new zone in her profile: the same query now means other local days.
    const changed = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(alice.token), payload: { timezone: 'Asia/Kolkata' } });
    assert.equal(changed.statusCode, 200, changed.body);
    await answer(alice, byMinute, 'Asia/Kolkata');
    await answer(alice, byDay, 'Asia/Kolkata');
    assert.equal(await answer(bob, byMinute, 'Europe/Berlin'), first);
  });

  it('writes and reads only the token\u2019s own user', async () => {
    const alice = await userWithToken(t);
    const bob = await userWithToken(t);
    const time = utc(2024, 12, 1);
    await postReadings(t, bob.token, [{ time, bpm: 99 }]);
    const [aliceDay] = (await readHeartRate(t, alice.token, { start_time: time, end_time: time + 1, timezone: 'UTC' })).heartrate;
    assert.equal(aliceDay!.minutes, 0);
    assert.deepEqual((await remove(alice.token, `start_time=${time}&end_time=${time + 60}`)).json(), { deleted: 0 });
    const [bobDay] = (await readHeartRate(t, bob.token, { start_time: time, end_time: time + 1, timezone: 'UTC' })).heartrate;
    assert.equal(bobDay!.max, 99);
  });
});
