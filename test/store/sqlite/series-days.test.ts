/**
 * SQLite's day reader (store/sqlite/series-days.ts): the rows of the days stored in a range, in day
 * order, with a gap where a day has no row, whatever detail is read.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DAY_SECONDS } from '../../../src/db/codec/day.js';
import { sqliteDays } from '../../../src/store/sqlite/series-days.js';
import { upload } from '../../api/sum-metrics-support.js';
import { utc } from '../../api/steps-support.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { userWithToken } from '../../support/tokens.js';

const FIRST = utc(2024, 4, 2);

let t: TestApp;
before(async () => {
  t = await createTestApp('sqlite');
  t.clock.set(utc(2024, 6, 1));
});
after(() => t.close());

it('reads the totals of the days stored in a range, none for a day without a row', async () => {
  const { user, token } = await userWithToken(t);
  const other = await userWithToken(t);
  // Days 0, 1 and 3 of the range; day 2 has no row. Another user's and another metric's days too.
  const samples = [0, 1, 3].flatMap((day) => [{ start_time: FIRST + day * DAY_SECONDS + 600, value: 10 + day }, { start_time: FIRST + day * DAY_SECONDS + 7200, value: 5 }]);
  await upload(t, token, 'steps', samples);
  await upload(t, other.token, 'steps', [{ start_time: FIRST + 2 * DAY_SECONDS, value: 99 }]);
  await upload(t, token, 'calories', [{ start_time: FIRST + 2 * DAY_SECONDS, value: 99 }]);
  const db = t.database.db;
  assert.ok(db.dialect === 'sqlite');
  const days = sqliteDays(db.executor);
  const totals = await days(user.id, 'steps', FIRST, FIRST + 4 * DAY_SECONDS, 'totals');
  assert.deepEqual(totals.map((row) => [row.day_start, row.total]), [[FIRST, 15], [FIRST + DAY_SECONDS, 16], [FIRST + 3 * DAY_SECONDS, 18]]);
  const inner = await days(user.id, 'steps', FIRST + DAY_SECONDS, FIRST + 3 * DAY_SECONDS, 'totals');
  assert.deepEqual(inner.map((row) => row.day_start), [FIRST + DAY_SECONDS], 'the range ends before its end');
  assert.deepEqual(await days(user.id, 'steps', FIRST + 4 * DAY_SECONDS, FIRST + 9 * DAY_SECONDS, 'totals'), []);
  // The other details read the same days.
  for (const detail of ['hours', 'minutes'] as const) {
    const rows = await days(user.id, 'steps', FIRST, FIRST + 4 * DAY_SECONDS, detail);
    assert.deepEqual(rows.map((row) => [row.day_start, row.total]), totals.map((row) => [row.day_start, row.total]), detail);
  }
});
