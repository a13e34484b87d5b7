/**
 * The day reader of PostgreSQL (store/postgres/series-days.ts), heart rate's days among them, answers as
 * SQLite's do: every row of every detail has `hours` and `minutes` as arrays — the packed columns
 * a detail reads, and an empty array for those it does not — and the sums and buckets computed from
 * them are the same whichever detail was read.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DAY_SECONDS } from '../../../src/db/codec/day.js';
import type { DayDetail, DayReader } from '../../../src/store/series-days.js';
import { postgresDays } from '../../../src/store/postgres/series-days.js';
import { sqliteDays } from '../../../src/store/sqlite/series-days.js';
import { postReadings, readHeartRate } from '../../api/heartrate-support.js';
import { readMetric, upload } from '../../api/sum-metrics-support.js';
import { utc } from '../../api/steps-support.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { userWithToken } from '../../support/tokens.js';

const FIRST = utc(2024, 4, 2);
const DETAILS: DayDetail[] = ['totals', 'hours', 'minutes'];

forEachDialect('day rows as each detail reads them', (dialect) => {
  let t: TestApp;
  let days: DayReader;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 6, 1));
    const db = t.database.db;
    days = db.dialect === 'postgres' ? postgresDays(db.pool) : sqliteDays(db.executor);
  });
  after(() => t.close());

  it('steps: hours and minutes are arrays in every detail, empty where not read', async () => {
    const { user, token } = await userWithToken(t);
    // Three days, a sample every 7 minutes from 06:00, another day's worth each day.
    const samples: Array<{ start_time: number; value: number }> = [];
    for (let day = 0; day < 3; day++) {
      for (let m = 360; m < 1440; m += 7) samples.push({ start_time: FIRST + day * DAY_SECONDS + m * 60, value: day + 1 });
    }
    await upload(t, token, 'steps', samples);
    const read = async (detail: DayDetail) => days(user.id, 'steps', FIRST, FIRST + 3 * DAY_SECONDS, detail);
    // Several reads of one turn go out as one statement on PostgreSQL.
    const [totals, hours, minutes] = await Promise.all(DETAILS.map(read));
    for (const rows of [totals!, hours!, minutes!]) {
      assert.deepEqual(rows.map((row) => [Number(row.day_start), Number(row.total)]), [0, 1, 2].map((day) => {
        const count = samples.filter((s) => s.start_time >= FIRST + day * DAY_SECONDS && s.start_time < FIRST + (day + 1) * DAY_SECONDS).length;
        return [FIRST + day * DAY_SECONDS, count * (day + 1)];
      }));
      for (const row of rows) assert.ok(row.hours instanceof Uint8Array && row.minutes instanceof Uint8Array);
    }
    assert.ok(totals!.every((row) => row.hours.length === 0 && row.minutes.length === 0));
    assert.ok(hours!.every((row) => row.hours.length > 0 && row.minutes.length === 0));
    assert.ok(minutes!.every((row) => row.hours.length > 0 && row.minutes.length > 0));
    // The series of each detail (daily in UTC: totals; hourly: hours; by minute: minutes) add up alike.
    const whole = samples.reduce((sum, s) => sum + s.value, 0);
    for (const granularity of ['day', 'hour']) {
      const series = await readMetric(t, token, 'steps', { start_time: FIRST, end_time: FIRST + 3 * DAY_SECONDS, granularity, timezone: 'UTC' });
      assert.equal(series.total, whole, granularity);
    }
    let byMinute = 0;
    for (let day = 0; day < 3; day++) {
      const start = FIRST + day * DAY_SECONDS;
      byMinute += (await readMetric(t, token, 'steps', { start_time: start, end_time: start + DAY_SECONDS, granularity: 'minute', timezone: 'UTC' })).total;
    }
    assert.equal(byMinute, whole);
  });

  it('heart rate: the same shape, and daily buckets equal to those read from the minutes', async () => {
    const { user, token } = await userWithToken(t);
    for (let day = 0; day < 2; day++) {
      const readings: Array<{ time: number; bpm: number }> = [];
      for (let m = 0; m < 1440; m += 5) readings.push({ time: FIRST + day * DAY_SECONDS + m * 60, bpm: 50 + ((m + day * 3) % 40) });
      await postReadings(t, token, readings);
    }
    const readDays = t.database.stores.heartRate.readDays;
    const [totals, hours, minutes] = await Promise.all(DETAILS.map((detail) => readDays(user.id, FIRST, FIRST + 2 * DAY_SECONDS, detail)));
    for (const rows of [totals!, hours!, minutes!]) {
      assert.equal(rows.length, 2);
      for (const row of rows) assert.ok(row.hours instanceof Uint8Array && row.minutes instanceof Uint8Array);
    }
    assert.ok(totals!.every((row) => row.hours.length === 0 && row.minutes.length === 0));
    assert.ok(hours!.every((row) => row.hours.length > 0 && row.minutes.length === 0));
    assert.ok(minutes!.every((row) => row.minutes.length > 0));
    const daily = await readHeartRate(t, token, { start_time: FIRST, end_time: FIRST + 2 * DAY_SECONDS, granularity: 'day', timezone: 'UTC' });
    assert.equal(daily.heartrate.length, 2);
    for (const [index, bucket] of daily.heartrate.entries()) {
      const byMinute = await readHeartRate(t, token, { start_time: bucket.start_time, end_time: bucket.end_time, granularity: 'minute', timezone: 'UTC' });
      const inDay = byMinute.heartrate.filter((b) => b.minutes > 0);
      assert.equal(bucket.minutes, inDay.length, `day ${index} minutes`);
      assert.equal(bucket.min, Math.min(...inDay.map((b) => b.min!)), `day ${index} min`);
      assert.equal(bucket.max, Math.max(...inDay.map((b) => b.max!)), `day ${index} max`);
    }
  });
});
