/**
 * The one writer of the minute metrics (store/series-writer.ts). Every metric of
 * db/series-metrics.ts goes through the same upload, export page and delete. Writes to one day at
 * the same moment: each merges its minutes into the day under the user's lock, so none loses
 * another's minutes — for distance and calories, and for steps and distance written together, whose
 * distance rows keep sums that match their minutes. And the export's pages of heart-rate minutes.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { SERIES_METRIC_NAMES } from '../../src/db/series-metrics.js';
import { seriesChange } from '../../src/domain/minute-samples.js';
import type { HeartRateMinute, SeriesWriter } from '../../src/store/series-writer.js';
import { readMetric, removeRange, upload } from '../api/sum-metrics-support.js';
import { utc } from '../api/steps-support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser, userWithToken } from '../support/tokens.js';

const DAY = utc(2024, 4, 2);
const UPLOADS = 12;

forEachDialect('series writer', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 6, 1));
  });
  after(() => t.close());

  const minuteSeries = async (token: string, metric: 'steps' | 'distance' | 'calories') =>
    (await readMetric(t, token, metric, { start_time: DAY, end_time: DAY + 86_400, granularity: 'minute', timezone: 'UTC' })).buckets.map((b) => b.value);

  for (const metric of ['distance', 'calories'] as const) {
    it(`${metric}: parallel uploads keep every minute of every upload`, async () => {
      const { token } = await userWithToken(t);
      // Upload i holds the minutes m with m % UPLOADS === i.
      const uploads = Array.from({ length: UPLOADS }, (_, i) => {
        const samples = [];
        for (let m = i; m < 1440; m += UPLOADS) samples.push({ start_time: DAY + m * 60, value: i + 1 });
        return samples;
      });
      await Promise.all(uploads.map((samples) => upload(t, token, metric, samples)));
      assert.deepEqual(await minuteSeries(token, metric), Array.from({ length: 1440 }, (_, m) => (m % UPLOADS) + 1));
    });
  }

  it('steps and distance written at once: distance as read is the same by minute and by hour', async () => {
    const { token } = await userWithToken(t);
    const writes = Array.from({ length: UPLOADS }, (_, i) => {
      const samples = [];
      for (let m = i; m < 1440; m += UPLOADS) samples.push({ start_time: DAY + m * 60, value: 10 + i });
      // Even uploads are steps, odd ones distance over the minutes of the upload before.
      return i % 2 === 0 ? upload(t, token, 'steps', samples) : upload(t, token, 'distance', samples.map((s) => ({ ...s, start_time: s.start_time - 60 })));
    });
    await Promise.all([...writes, removeRange(t, token, 'calories', DAY, DAY + 86_400)]);
    const minutes = await minuteSeries(token, 'distance');
    const expected = Array.from({ length: 1440 }, (_, m) => {
      const i = m % UPLOADS;
      if (i % 2 === 1) return 0;
      // Minute m has the steps of upload i, and the distance of upload i + 1 (one minute earlier).
      return 10 + i + 1;
    });
    assert.deepEqual(minutes, expected);
    const hours = await readMetric(t, token, 'distance', { start_time: DAY, end_time: DAY + 86_400, granularity: 'hour', timezone: 'UTC' });
    assert.deepEqual(hours.buckets.map((b) => b.value), Array.from({ length: 24 }, (_, h) => minutes.slice(h * 60, h * 60 + 60).reduce((a, b) => a + b, 0)));
  });

  for (const metric of SERIES_METRIC_NAMES) {
    it(`${metric}: the last sample of a minute wins, an export page gives the minutes back, a delete that empties a day drops its row`, async () => {
      const user = await createUser(t);
      const store = (metric === 'heartrate' ? t.database.stores.heartRate : t.database.stores[metric]) as unknown as SeriesWriter<{ start_time: number }>;
      const sample = (start_time: number, v: number) => (metric === 'heartrate' ? { start_time, avg: v, min: v - 5, max: v + 5 } : { start_time, value: metric === 'calories' ? v / 10 : v });
      const change = (starts: readonly number[]) => seriesChange(starts, 'UTC', t.clock(), 0);
      const dayRows = async () =>
        (await t.database.db.kysely.selectFrom('series_days').select('day_start').where('user_id', '=', user.id).where('metric', '=', metric).orderBy('day_start').execute()).map((row) => Number(row.day_start));
      const [first, second] = [DAY + 600 * 60, DAY + 86_400 + 60];
      assert.equal(await store.upsertSamples(user.id, [sample(first, 70), sample(first, 80), sample(second, 90)], change([first, second])), 3);
      assert.deepEqual(await store.samplesAfter(user.id, 0, 10), [sample(first, 80), sample(second, 90)]);
      assert.deepEqual(await dayRows(), [DAY, DAY + 86_400]);
      assert.equal(await store.deleteRange(user.id, DAY, DAY + 86_400, change), 1);
      assert.deepEqual(await dayRows(), [DAY + 86_400], 'the emptied day has no row');
      assert.equal(await store.deleteRange(user.id, DAY, DAY + 86_400, change), 0);
      assert.deepEqual(await store.samplesAfter(user.id, 0, 10), [sample(second, 90)]);
    });
  }

  it('pages through every minute of a person in order, across days and gaps', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const store = t.database.stores.heartRate;
    const start = Date.UTC(2024, 0, 1) / 1000;
    // 20 days, each with a few hours of minutes, every third day missing.
    const minutes: HeartRateMinute[] = [];
    for (let day = 0; day < 20; day++) {
      if (day % 3 === 2) continue;
      for (let m = 0; m < 200; m++) minutes.push({ start_time: start + day * 86_400 + (600 + m) * 60, avg: 60 + (m % 40), min: 55 + (m % 40), max: 70 + (m % 40) });
    }
    const change = (list: HeartRateMinute[]) => seriesChange(list.map((m) => m.start_time), 'UTC', start, 0);
    await store.upsertSamples(user.id, minutes, change(minutes));
    await store.upsertSamples(other.id, minutes.slice(0, 10), change(minutes.slice(0, 10)));
    const paged: HeartRateMinute[] = [];
    let after = 0;
    for (;;) {
      const page = await store.samplesAfter(user.id, after, 333);
      paged.push(...page);
      if (page.length < 333) break;
      after = page[page.length - 1]!.start_time;
    }
    assert.deepEqual(paged, minutes);
    assert.deepEqual(await store.samplesAfter(user.id, minutes[minutes.length - 1]!.start_time, 10), []);
  });
});
