/**
 * Writes to one day at the same moment (store/minute-series.ts): each merges its minutes into the
 * day under the user's lock, so none loses another's minutes — for distance and calories, and for
 * steps and distance written together, whose distance rows keep sums that match their minutes.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { readMetric, removeRange, upload } from '../api/sum-metrics-support.js';
import { utc } from '../api/steps-support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { userWithToken } from '../support/tokens.js';

const DAY = utc(2024, 4, 2);
const UPLOADS = 12;

forEachDialect('parallel writes of minute metrics', (dialect) => {
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
});
