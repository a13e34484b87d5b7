/**
 * The daily summary's reads (store/daily-summary.ts): each kind's figures are those its own
 * reads give (the series sums, heart rate's resting value, the sessions and the weighings), in
 * zones whose days are read by totals, by hours and by minutes; the minutes of steps and
 * heart rate and the sleep sessions covering them are those stored, and reading them changes no
 * other figure; only the kinds asked for are read; and summaries read in one turn — one statement
 * per detail on PostgreSQL — each get their own person's rows.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { minutesOfReadings } from '../../src/domain/heart-rate-readings.js';
import { parseDateRange } from '../../src/domain/local-dates.js';
import { seriesChange } from '../../src/domain/minute-samples.js';
import { keptPlans } from '../../src/domain/kept-plans.js';
import { NIGHT_SHIFT_WORKER, OFFICE_WORKER, synthesizePerson, type Life } from '../../src/domain/synthetic-person.js';
import { SUMMARY_KINDS, type SummaryFigures } from '../../src/store/daily-summary.js';
import { NO_STEPS } from '../../src/store/minute-days.js';
import { heartRateBuckets } from '../../src/store/heart-rate-series.js';
import type { Stores } from '../../src/store/stores.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';

const NOW = Date.UTC(2025, 2, 12, 12) / 1000;
const DAYS = 6;
const STRIDE_CM = 80;
const ALL = SUMMARY_KINDS.activity | SUMMARY_KINDS.heartRate | SUMMARY_KINDS.sleep | SUMMARY_KINDS.weight;
const change = { now: NOW, coalesceSeconds: 0, dateOf: (time: number) => new Date(time * 1000).toISOString().slice(0, 10) };
const planOf = keptPlans();

async function insertUser(database: TestDatabase): Promise<string> {
  const id = randomUUID();
  await database.db.kysely.insertInto('users').values({ id, email: `${id}@example.test`, password_hash: 'x', display_name: 'S', stride_length_cm: STRIDE_CM, created_at: 0, updated_at: 0 }).execute();
  return id;
}

/** A made-up person's days through the stores, and distance sent for a few minutes of each day. */
async function store(stores: Stores, userId: string, life: Life, seed: number): Promise<void> {
  const person = synthesizePerson(life, NOW, DAYS, seed);
  const changeOf = (samples: Array<{ start_time: number }>) => seriesChange(samples.map((s) => s.start_time), 'UTC', NOW, 0);
  await stores.steps.upsertSamples(userId, person.steps, changeOf(person.steps));
  await stores.calories.upsertSamples(userId, person.calories, changeOf(person.calories));
  const distance = person.steps.filter((_, i) => i % 97 === 0).map((s) => ({ start_time: s.start_time, value: 1000 + s.value }));
  await stores.distance.upsertSamples(userId, distance, changeOf(distance));
  const minutes = minutesOfReadings(person.heartrate);
  await stores.heartRate.upsertSamples(userId, minutes, seriesChange(minutes.map((m) => m.start_time), 'UTC', NOW, 0));
  for (const session of person.sleep) assert.ok('saved' in (await stores.sleep.save(userId, session, change)));
  for (const w of person.weight) await stores.bodyWeight.save(userId, { time: w.time, kg_hundredths: Math.round(w.kg * 100), fat_hundredths: null }, change);
}

/** The summary's range of the last DAYS dates in `timezone`, and its plan. */
function rangeIn(timezone: string) {
  const today = new Date(NOW * 1000).toISOString().slice(0, 10);
  const first = new Date((NOW - (DAYS - 1) * 86_400) * 1000).toISOString().slice(0, 10);
  const range = parseDateRange({ start_date: first, end_date: today, timezone }, 'UTC', NOW, { defaultDays: 1, maxDays: 366 });
  return { range, plan: planOf({ timezone, granularity: 'day', start: range.from, end: range.to }) };
}

/** What each kind's own reads give for the summary of `userId` in `timezone`. */
async function ownReads(stores: Stores, userId: string, timezone: string): Promise<Required<Omit<SummaryFigures, 'minuteDays'>>> {
  const { range, plan } = rangeIn(timezone);
  const sessions = await stores.sleep.endingWithin(userId, range.from, range.to);
  return {
    steps: await stores.steps.sums(userId, plan),
    distance: await stores.distance.sums(userId, plan, null, STRIDE_CM),
    calories: await stores.calories.sums(userId, plan),
    resting: (await heartRateBuckets(stores.heartRate.readDays, userId, plan)).resting!,
    sleep: sessions.map((s) => ({
      end_time: s.end_time,
      asleep_seconds: s.stages.filter((stage) => stage.stage !== 'awake').reduce((sum, stage) => sum + stage.end_time - stage.start_time, 0),
    })),
    weights: (await stores.bodyWeight.within(userId, range.from, range.to)).map(({ time, kg_hundredths }) => ({ time, kg_hundredths })),
  };
}

function figures(stores: Stores, userId: string, timezone: string, kinds: number): Promise<SummaryFigures> {
  const { range, plan } = rangeIn(timezone);
  return stores.summary.figures(userId, plan, range, kinds, STRIDE_CM);
}

forEachDialect('daily summary store', (dialect) => {
  let database: TestDatabase;
  let office: string;
  let nightShift: string;
  before(async () => {
    database = await createTestDatabase(dialect);
    office = await insertUser(database);
    nightShift = await insertUser(database);
    await store(database.stores, office, OFFICE_WORKER, 3);
    await store(database.stores, nightShift, NIGHT_SHIFT_WORKER, 4);
  });
  after(() => database.drop());

  // UTC reads day totals, Berlin hours, Kolkata (half an hour off) minutes.
  for (const timezone of ['UTC', 'Europe/Berlin', 'Asia/Kolkata']) {
    it(`gives each kind's figures as its own reads do, in ${timezone}`, async () => {
      const { stores } = database;
      for (const userId of [office, nightShift]) {
        const expected = await ownReads(stores, userId, timezone);
        // Not a comparison of nothing: every kind has data on most days.
        assert.ok(expected.steps.filter((s) => s > 0).length >= DAYS - 1, `steps ${expected.steps}`);
        assert.ok(expected.distance.filter((s) => s > 0).length >= DAYS - 1, `distance ${expected.distance}`);
        assert.ok(expected.resting.filter((r) => r !== null).length >= DAYS - 2, `resting ${expected.resting}`);
        assert.ok(expected.sleep.length >= DAYS - 2 && expected.sleep.every((s) => s.asleep_seconds > 3600));
        assert.ok(expected.weights.length >= 2);
        assert.deepEqual(await figures(stores, userId, timezone, ALL), expected);
      }
    });
  }

  for (const timezone of ['UTC', 'Europe/Berlin', 'Asia/Kolkata']) {
    it(`gives the minutes stored and the sleep sessions covering them, changing no other figure, in ${timezone}`, async () => {
      const { stores } = database;
      const { range, plan } = rangeIn(timezone);
      const person = synthesizePerson(OFFICE_WORKER, NOW, DAYS, 3);
      const read = await figures(stores, office, timezone, SUMMARY_KINDS.minutes);
      assert.deepEqual(Object.keys(read), ['minuteDays']);
      const days = read.minuteDays!;
      // The UTC days under the plan's local days.
      const dayFrom = plan.boundaries[0]! - (plan.boundaries[0]! % 86_400);
      const dayTo = plan.boundaries[plan.boundaries.length - 1]!;
      const within = (time: number) => time >= dayFrom && time - (time % 86_400) < dayTo;
      const stepsRead = new Map<number, number>();
      for (const [day, minutes] of days.steps) Array.from(minutes).forEach((value, m) => value !== NO_STEPS && stepsRead.set(day + m * 60, value));
      assert.deepEqual(stepsRead, new Map(person.steps.filter((s) => within(s.start_time)).map((s) => [s.start_time, s.value])));
      const heartRead = new Map<number, number>();
      for (const [day, avg] of days.heartRate) Array.from(avg).forEach((bpm, m) => bpm !== 0 && heartRead.set(day + m * 60, bpm));
      assert.deepEqual(heartRead, new Map(minutesOfReadings(person.heartrate).filter((m) => within(m.start_time)).map((m) => [m.start_time, m.avg])));
      assert.ok(stepsRead.size > 1000 && heartRead.size > 1000);
      const covering = person.sleep.filter((s) => s.end_time >= range.from && s.start_time < range.to);
      assert.deepEqual(days.sleep, covering.map(({ start_time, end_time }) => ({ start_time, end_time })));
      // With every other kind, each is what it is without the minutes.
      const { minuteDays, ...others } = await figures(stores, office, timezone, ALL | SUMMARY_KINDS.minutes);
      assert.deepEqual(minuteDays, days);
      assert.deepEqual(others, await figures(stores, office, timezone, ALL));
    });
  }

  it('reads only the kinds asked for', async () => {
    const { stores } = database;
    const expected = await ownReads(stores, office, 'Europe/Berlin');
    assert.deepEqual(await figures(stores, office, 'Europe/Berlin', SUMMARY_KINDS.heartRate | SUMMARY_KINDS.weight), { resting: expected.resting, weights: expected.weights });
    assert.deepEqual(await figures(stores, office, 'Europe/Berlin', SUMMARY_KINDS.sleep), { sleep: expected.sleep });
    const { steps, distance, calories } = expected;
    assert.deepEqual(await figures(stores, office, 'Europe/Berlin', SUMMARY_KINDS.activity), { steps, distance, calories });
    assert.deepEqual(await figures(stores, office, 'Europe/Berlin', 0), {});
    assert.deepEqual(await figures(stores, randomUUID(), 'UTC', ALL), { steps: [], distance: [], calories: [], resting: new Array(DAYS).fill(null), sleep: [], weights: [] });
  });

  it('gives summaries read at once each its own person\'s rows, whatever their kinds and zones', async () => {
    const { stores } = database;
    const asks = [
      [office, 'UTC', ALL],
      [nightShift, 'UTC', ALL],
      [office, 'Asia/Kolkata', SUMMARY_KINDS.activity | SUMMARY_KINDS.sleep],
      [nightShift, 'Asia/Kolkata', ALL],
      [nightShift, 'UTC', SUMMARY_KINDS.weight],
      [office, 'Europe/Berlin', SUMMARY_KINDS.heartRate],
      [randomUUID(), 'UTC', ALL],
    ] as const;
    const alone = [];
    for (const [userId, timezone, kinds] of asks) alone.push(await figures(stores, userId, timezone, kinds));
    const together = await Promise.all(asks.map(([userId, timezone, kinds]) => figures(stores, userId, timezone, kinds)));
    assert.deepEqual(together, alone);
    // The two people's figures differ, so rows given to the wrong read would show.
    assert.notDeepEqual(together[0], together[1]);
  });
});
