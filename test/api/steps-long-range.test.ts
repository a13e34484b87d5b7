/**
 * A daily series of years in a zone whose midnights are not on UTC hours (Australia/Lord_Howe,
 * +10:30 and +11:00) reads corrections for every day: on PostgreSQL that made more than the 1664
 * columns a batched statement may unnest, and the read answered 500 (found by test/fuzz/api.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { userWithToken } from '../support/tokens.js';
import { postSamples, readSeries } from './steps-support.js';

forEachDialect('daily series of the longest range in a half-hour zone', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('sums every sample of three years into local days', async () => {
    const { token } = await userWithToken(t);
    const now = t.clock();
    const lastMinute = now - (now % 60);
    // One sample every 17 hours and 3 minutes, over the three years read.
    const samples = Array.from({ length: 1500 }, (_, i) => ({ start_time: lastMinute - i * 61_380, value: (i * 7) % 1001 }));
    await postSamples(t, token, samples);
    const series = await readSeries(t, token, { start_time: now - 1094 * 86_400, end_time: now, granularity: 'day', timezone: 'Australia/Lord_Howe' });
    assert.equal(series.steps.length, 1095);
    assert.equal(series.total, samples.reduce((sum, sample) => sum + sample.value, 0));
  });
});
