/** The heart-rate store (store/heart-rate.ts): the export's pages of minutes. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { seriesChange } from '../../src/domain/minute-samples.js';
import type { HeartRateMinute } from '../../src/store/heart-rate.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser } from '../support/tokens.js';

forEachDialect('heart-rate store', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

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
    await store.upsertMinutes(user.id, minutes, change(minutes));
    await store.upsertMinutes(other.id, minutes.slice(0, 10), change(minutes.slice(0, 10)));
    const paged: HeartRateMinute[] = [];
    let after = 0;
    for (;;) {
      const page = await store.minutesAfter(user.id, after, 333);
      paged.push(...page);
      if (page.length < 333) break;
      after = page[page.length - 1]!.start_time;
    }
    assert.deepEqual(paged, minutes);
    assert.deepEqual(await store.minutesAfter(user.id, minutes[minutes.length - 1]!.start_time, 10), []);
  });
});
