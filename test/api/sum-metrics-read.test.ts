/**
 * Distance and calories read back as series (api/sum-metrics.ts, store/series-sums.ts): by minute,
 * hour and local day, in UTC, across both DST changes of Europe/Berlin and in Asia/Kolkata, whose
 * local hours and days cut UTC hours in half.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Granularity } from '../../src/calendar/step-buckets.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { userWithToken } from '../support/tokens.js';
import { expectedBuckets, readMetric, upload, type Metric } from './sum-metrics-support.js';
import { utc } from './steps-support.js';

const DAY = 86_400;

/** Stored units: metres, or tenths of a kcal (0.0 to 100.0). */
const storedAt: Record<Exclude<Metric, 'steps'>, (i: number) => number> = {
  distance: (i) => (i * 53) % 2001,
  calories: (i) => (i * 37) % 1001,
};
const SCALE = { distance: 1, calories: 10 } as const;

forEachDialect('distance and calories series', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 12, 1));
  });
  after(() => t.close());

  for (const metric of ['distance', 'calories'] as const) {
    /** Uploads `count` minutes from `first` (every seventh one left out) and returns them in stored units. */
    async function uploadMinutes(token: string, first: number, count: number): Promise<Map<number, number>> {
      const minutes = new Map<number, number>();
      for (let i = 0; i < count; i++) if (i % 7 !== 3) minutes.set(first + i * 60, storedAt[metric](i));
      await upload(t, token, metric, [...minutes].map(([start_time, value]) => ({ start_time, value: value / SCALE[metric] })));
      return minutes;
    }

    async function assertSeries(token: string, minutes: Map<number, number>, zone: string, granularity: Granularity, start: number, end: number) {
      const series = await readMetric(t, token, metric, { start_time: start, end_time: end, granularity, timezone: zone });
      const expected = expectedBuckets(minutes, zone, granularity, start, end, SCALE[metric]);
      assert.deepEqual(series.buckets, expected, `${metric} ${zone} ${granularity}`);
      return series;
    }

    it(`${metric}: a UTC day reads back by minute, hour and day`, async () => {
      const { token } = await userWithToken(t);
      const day = utc(2024, 4, 2);
      const minutes = await uploadMinutes(token, day, 1440);
      for (const granularity of ['minute', 'hour', 'day'] as const) await assertSeries(token, minutes, 'UTC', granularity, day, day + DAY);
      const daily = await assertSeries(token, minutes, 'UTC', 'day', day - 3 * DAY, day + 3 * DAY);
      assert.equal(daily.buckets.length, 6);
      assert.equal(daily.total, [...minutes.values()].reduce((a, b) => a + b, 0) / SCALE[metric]);
    });

    it(`${metric}: Europe/Berlin across both DST changes, days of 23 and 25 hours`, async () => {
      const { token } = await userWithToken(t);
      for (const [change, hours] of [[utc(2024, 3, 31), 23], [utc(2024, 10, 27), 25]] as const) {
        const minutes = await uploadMinutes(token, change - DAY, 3 * 1440);
        const daily = await assertSeries(token, minutes, 'Europe/Berlin', 'day', change - DAY, change + 2 * DAY - 7200);
        assert.ok(daily.buckets.some((b) => b.end_time - b.start_time === hours * 3600), `a day of ${hours} hours`);
        await assertSeries(token, minutes, 'Europe/Berlin', 'hour', change - 12 * 3600, change + 36 * 3600);
        // The local day of the change, by minute (at most a day: from 1 a.m. local on the long one).
        await assertSeries(token, minutes, 'Europe/Berlin', 'minute', change - 3600 + (hours === 25 ? 3600 : 0), change - 3600 + 23 * 3600);
      }
    });

    it(`${metric}: Asia/Kolkata by day, hour and minute`, async () => {
      const { token } = await userWithToken(t);
      const first = utc(2024, 6, 10);
      const minutes = await uploadMinutes(token, first, 3 * 1440);
      const daily = await assertSeries(token, minutes, 'Asia/Kolkata', 'day', first, first + 3 * DAY);
      assert.equal(daily.buckets[0]!.start_time % 3600, 1800, 'local midnight is at half past a UTC hour');
      await assertSeries(token, minutes, 'Asia/Kolkata', 'hour', first + 5 * 3600, first + 40 * 3600);
      await assertSeries(token, minutes, 'Asia/Kolkata', 'minute', first + DAY - 19 * 3600, first + 2 * DAY - 19 * 3600);
    });
  }

  it('answers a range with no data as a dense series of zeros', async () => {
    const { token } = await userWithToken(t);
    for (const metric of ['distance', 'calories'] as const) {
      const series = await readMetric(t, token, metric, { start_time: utc(2024, 5, 1), end_time: utc(2024, 5, 8) });
      assert.deepEqual(series.buckets.map((b) => b.value), [0, 0, 0, 0, 0, 0, 0]);
      assert.equal(series.total, 0);
    }
  });
});
