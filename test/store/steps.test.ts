/**
 * Uploads to one day at the same moment (store/steps.ts): each merges its minutes into the day
 * under the user's lock, so none loses another's minutes, on either database.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { postSamples, readSeries, utc } from '../api/steps-support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { storedStepDays } from '../support/series-days.js';
import { userWithToken } from '../support/tokens.js';

const DAY = utc(2024, 4, 2);
const UPLOADS = 12;

forEachDialect('parallel uploads to one day', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 6, 1));
  });
  after(() => t.close());

  it('keep every minute of every upload', async () => {
    const { user, token } = await userWithToken(t);
    // Upload i holds the minutes m with m % UPLOADS === i, and minute i again with another value:
    // the same minute sent by two uploads ends with one of their values.
    const uploads = Array.from({ length: UPLOADS }, (_, i) => {
      const samples = [];
      for (let m = i; m < 1440; m += UPLOADS) samples.push({ start_time: DAY + m * 60, value: i + 1 });
      if (i > 0) samples.push({ start_time: DAY + 6000 * 60 + i * 60, value: 7 }); // the next day, one each
      return samples;
    });
    await Promise.all(uploads.map((samples) => postSamples(t, token, samples)));
    const minutes = await readSeries(t, token, { start_time: DAY, end_time: DAY + 86_400, granularity: 'minute', timezone: 'UTC' });
    assert.deepEqual(minutes.steps.map((b) => b.value), Array.from({ length: 1440 }, (_, m) => (m % UPLOADS) + 1));
    const days = await storedStepDays(t.database.db.kysely, user.id);
    assert.deepEqual(days.map((d) => [d.day_start, d.total]), [
      [DAY, minutes.total],
      [DAY + 4 * 86_400, 7 * (UPLOADS - 1)],
    ]);
  });
});
