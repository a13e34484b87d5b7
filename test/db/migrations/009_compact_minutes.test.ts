/**
 * 009_compact_minutes: a database at 007 with step days in the form 007 wrote — more than a page of
 * them, days full and sparse, zeros, users with and without a stride length — keeps every minute
 * and every sum of its steps, in the format of db/codec/minute-values.ts, and gains the distance rows those
 * steps derive, whose sums a series reads as it reads the minutes.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Kysely } from 'kysely';
import { planBuckets } from '../../../src/calendar/step-buckets.js';
import { MIGRATIONS, migrateToLatest } from '../../../src/db/migrate.js';
import { ABSENT, emptyDay, hourSums, packHours, packRuns, unpackHours, unpackMinutes, type DayMinutes } from '../../../src/db/codec/minute-values.js';
import { DEFLATED, RAW } from '../../../src/db/codec/frame.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../../support/databases.js';

const FIRST = Date.UTC(2023, 0, 1) / 1000;
const DAY = 86_400;

/** Each user's days: `tall` (stride 100) 700 sparse days and 3 full ones, `plain` (no stride) 400 days. */
function stepDays(): Array<{ user: string; day_start: number; minutes: DayMinutes }> {
  const days = [];
  for (let d = 0; d < 700; d++) {
    const minutes = emptyDay();
    minutes[d % 1440] = d % 5 === 0 ? 0 : (d * 7) % 1001;
    days.push({ user: 'tall', day_start: FIRST + d * DAY, minutes });
  }
  for (let d = 700; d < 703; d++) days.push({ user: 'tall', day_start: FIRST + d * DAY, minutes: emptyDay().map((_, m) => (m * 13 + d) % 140) });
  for (let d = 0; d < 400; d++) {
    const minutes = emptyDay();
    for (let m = 420; m < 1380; m += 2) minutes[m] = (m + d) % 9 === 0 ? 0 : (m * d) % 180;
    days.push({ user: 'plain', day_start: FIRST + d * DAY, minutes });
  }
  return days;
}

forEachDialect('migration 009_compact_minutes', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('packs every step day anew, its minutes and sums unchanged, and derives its distance', async () => {
    const db = database.db.kysely as Kysely<any>;
    const earlier = Object.keys(MIGRATIONS).sort().filter((name) => name < '009');
    await db.schema.createTable('stride_migrations').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
    for (const name of earlier) {
      await MIGRATIONS[name]!.up(db);
      await db.insertInto('stride_migrations').values({ name, applied_at: 0 }).execute();
    }
    for (const [id, stride] of [['tall', 100], ['plain', null], ['none', 180]] as const) {
      await db.insertInto('users').values({ id, email: `${id}@example.com`, password_hash: 'x', display_name: id, stride_length_cm: stride, created_at: 1, updated_at: 1 }).execute();
    }
    const before = stepDays();
    const rows = before.map(({ user, day_start, minutes }) => {
      const hours = hourSums(minutes);
      return { user_id: user, metric: 'steps', day_start, total: hours.reduce((a, b) => a + b, 0), hours: packHours(hours), minutes: packRuns(minutes) };
    });
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('series_days').values(rows.slice(i, i + 500)).execute();

    assert.ok((await migrateToLatest(database.db)).includes('009_compact_minutes'));

    const after = await db.selectFrom('series_days').selectAll().orderBy('user_id').orderBy('metric').orderBy('day_start').execute();
    const steps = after.filter((row) => row.metric === 'steps');
    assert.equal(steps.length, before.length);
    const formats = new Set<number>();
    for (const row of steps) {
      const expected = before.find((day) => day.user === row.user_id && day.day_start === Number(row.day_start))!;
      formats.add(row.minutes[0]);
      assert.deepEqual(unpackMinutes(row.minutes), expected.minutes);
      assert.deepEqual(unpackHours(row.hours), hourSums(expected.minutes));
      assert.equal(Number(row.total), hourSums(expected.minutes).reduce((a, b) => a + b, 0));
    }
    assert.deepEqual([...formats].sort(), [RAW, DEFLATED], 'sparse days raw, full ones deflated');
    const fullDay = steps.find((row) => row.user_id === 'tall' && Number(row.day_start) === FIRST + 700 * DAY)!;
    assert.ok(fullDay.minutes.length < 1000, `a full day of steps in ${fullDay.minutes.length} bytes`);

    const distance = after.filter((row) => row.metric === 'distance');
    const stride = { tall: 100, plain: 75 } as Record<string, number>;
    const expectedDistance = before
      .map(({ user, day_start, minutes }) => ({ user, day_start, metres: minutes.map((v) => (v === ABSENT ? ABSENT : Math.round((v * stride[user]!) / 100))) }))
      .filter((day) => day.metres.some((v) => v > 0));
    assert.equal(distance.length, expectedDistance.length, 'a distance row for each day whose steps derive some');
    assert.ok(expectedDistance.length < before.length, 'days of zero steps only have none');
    for (const row of distance) {
      const expected = expectedDistance.find((day) => day.user === row.user_id && day.day_start === Number(row.day_start))!;
      assert.equal(row.minutes.length, 0, 'no distance was uploaded');
      assert.deepEqual(unpackHours(row.hours), hourSums(expected.metres));
      assert.equal(Number(row.total), hourSums(expected.metres).reduce((a, b) => a + b, 0));
    }

    // The series store reads the days of both metrics after the migration.
    const plan = planBuckets('UTC', 'day', FIRST, FIRST + 10 * DAY);
    const stepSums = await database.stores.steps.sums('plain', plan);
    const distanceSums = await database.stores.distance.sums('plain', plan, null, null);
    for (let d = 0; d < 10; d++) {
      const day = before.find((x) => x.user === 'plain' && x.day_start === FIRST + d * DAY)!;
      assert.equal(stepSums[d] ?? 0, hourSums(day.minutes).reduce((a, b) => a + b, 0));
      assert.equal(distanceSums[d] ?? 0, hourSums(day.minutes.map((v) => (v === ABSENT ? ABSENT : Math.round(v * 0.75)))).reduce((a, b) => a + b, 0));
    }
  });
});
