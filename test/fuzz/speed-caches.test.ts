/**
 * The kept values of src/ against their plain paths, for random inputs — the database plays no
 * part: a zone's offset spans (src/calendar/zone-offsets.ts), bucket plans
 * (src/domain/kept-plans.ts), the daily summary's unpacked minutes (src/store/minute-days.ts)
 * through random sequences of edits and reads, and the Fitbit-compatible paths' dates
 * (src/api/fitbit/dates.ts), refusals included. Each kept one is given little room, so that some
 * of what it keeps is let go.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { offsetSpans, planBuckets, plainOffsetSpans } from '../../src/calendar/step-buckets.js';
import { keptChunks } from '../../src/calendar/zone-offsets.js';
import { ABSENT, emptyDay, packMinutes } from '../../src/db/codec/minute-values.js';
import { emptyHeartRateDay, packHeartRateMinutes } from '../../src/db/codec/heart-rate-minutes.js';
import { activityOfDays } from '../../src/domain/daily-activity.js';
import { keptPlans, planOf } from '../../src/domain/kept-plans.js';
import { datesOfDays } from '../../src/domain/local-dates.js';
import { keptMinuteDays, PLAIN_MINUTE_DAYS, type MinuteDays, type MinuteRow, type SleepSpan } from '../../src/store/minute-days.js';
import { datesOf, keptDates, PERIODS } from '../../src/api/fitbit/dates.js';
import { propertyRuns } from './runs.js';

const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Kiritimati', 'Pacific/Honolulu', 'America/Sao_Paulo'];
const zone = fc.constantFrom(...ZONES);
/** Instants from 1965 to 2045, where zones changed their rules, and near chunk edges. */
const instant = fc.integer({ min: -160_000_000, max: 2_400_000_000 });

it('gives the same offset spans with chunks kept as worked out each time', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(zone, instant, fc.integer({ min: 1, max: 800 * 86_400 })), { minLength: 1, maxLength: 5 }), (ranges) => {
      for (const [name, from, length] of ranges) assert.deepEqual(offsetSpans(name, from, from + length), plainOffsetSpans(name, from, from + length));
    }),
    propertyRuns(25),
  );
  // The mechanism's own keeping, with room for two chunks: what it answers is what it is given.
  let computed = 0;
  const kept = keptChunks((name: string, chunk: number) => (computed++, `${name} ${chunk}`), 2);
  fc.assert(
    fc.property(fc.array(fc.tuple(zone, fc.integer({ min: -3, max: 3 })), { maxLength: 30 }), (calls) => {
      for (const [name, chunk] of calls) assert.equal(kept(name, chunk), `${name} ${chunk}`);
    }),
    propertyRuns(100),
  );
  assert.ok(computed > 0);
});

it('gives the same bucket plans kept as planned each time', () => {
  const plans = keptPlans();
  const request = fc.record({
    timezone: zone,
    granularity: fc.constantFrom('minute' as const, 'hour' as const, 'day' as const),
    start: fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }),
    days: fc.integer({ min: 0, max: 3 }),
  });
  fc.assert(
    fc.property(fc.array(request, { minLength: 1, maxLength: 6 }), (requests) => {
      for (const { days, ...rest } of requests) {
        const asked = { ...rest, end: rest.start + (rest.granularity === 'minute' ? Math.min(days, 1) : days * 30) * 86_400 };
        assert.deepEqual(plans(asked), planOf(asked));
        assert.equal(plans(asked), plans({ ...asked }), 'an equal request finds the same plan');
      }
    }),
    propertyRuns(100),
  );
});

const DAY = 86_400;
/** Three UTC days from Saturday 26 October 2024, with the end of summer time in Europe and, a week later, New York. */
const FIRST_DAY = Date.UTC(2024, 9, 26) / 1000;

const edit = fc.record({
  kind: fc.constantFrom('steps' as const, 'heartRate' as const, 'calories' as const),
  day: fc.nat({ max: 2 }),
  minute: fc.nat({ max: 1439 }),
  length: fc.integer({ min: 1, max: 300 }),
  value: fc.integer({ min: -1, max: 200 }),
});
const read = fc.record({
  timezone: zone,
  profile: fc.record({ max_heart_rate: fc.option(fc.integer({ min: 120, max: 220 })), birth_year: fc.option(fc.integer({ min: 1930, max: 2010 })) }),
  sleep: fc.uniqueArray(fc.integer({ min: 0, max: 3 * 1440 }), { maxLength: 6 }).map((points): SleepSpan[] => {
    const sorted = points.sort((a, b) => a - b);
    const spans: SleepSpan[] = [];
    for (let i = 0; i + 1 < sorted.length; i += 2) spans.push({ start_time: FIRST_DAY + sorted[i]! * 60, end_time: FIRST_DAY + sorted[i + 1]! * 60 });
    return spans;
  }),
});

const asArrays = (days: MinuteDays) => ({
  steps: [...days.steps].map(([day, minutes]) => [day, Array.from(minutes)]),
  heartRate: [...days.heartRate].map(([day, minutes]) => [day, Array.from(minutes)]),
  calories: [...days.calories].map(([day, minutes]) => [day, Array.from(minutes)]),
  sleep: days.sleep,
});

it("gives the same minutes, and the same activity counted from them, with the summary's days kept as unpacked each time", () => {
  let reads = 0;
  fc.assert(
    fc.property(fc.array(fc.oneof({ weight: 2, arbitrary: edit.map((e) => ({ edit: e })) }, { weight: 3, arbitrary: read.map((r) => ({ read: r })) }), { minLength: 1, maxLength: 15 }), (steps) => {
      // Room for a few days only: some are let go and unpacked again.
      const keptDays = keptMinuteDays(40_000);
      const stored = { steps: [emptyDay(), emptyDay(), emptyDay()], heartRate: [emptyHeartRateDay(), emptyHeartRateDay(), emptyHeartRateDay()], calories: [emptyDay(), emptyDay(), emptyDay()] };
      for (const step of steps) {
        if ('edit' in step) {
          const { kind, day, minute, length, value } = step.edit;
          const end = Math.min(1440, minute + length);
          if (kind === 'heartRate') {
            const bpm = value <= 0 ? 0 : 30 + value;
            for (const part of ['avg', 'min', 'max'] as const) stored.heartRate[day]![part].fill(bpm, minute, end);
          } else {
            stored[kind][day]!.fill(value < 0 ? ABSENT : value, minute, end);
          }
          continue;
        }
        const { timezone, profile, sleep } = step.read;
        const rows = (days: Uint8Array[]): MinuteRow[] => days.map((minutes, d) => ({ day_start: FIRST_DAY + d * DAY, minutes }));
        const stepRows = rows(stored.steps.map(packMinutes));
        const heartRows = rows(stored.heartRate.map(packHeartRateMinutes));
        const calorieRows = rows(stored.calories.map(packMinutes));
        const fromKept = keptDays.daysOf('ada', stepRows, heartRows, calorieRows, [...sleep]);
        const fromPlain = PLAIN_MINUTE_DAYS.daysOf('ada', stepRows, heartRows, calorieRows, [...sleep]);
        assert.deepEqual(asArrays(fromKept), asArrays(fromPlain));
        const { boundaries } = planBuckets(timezone, 'day', FIRST_DAY + DAY / 2, FIRST_DAY + 2 * DAY + DAY / 2);
        const dates = datesOfDays(boundaries, timezone);
        assert.deepEqual(activityOfDays(boundaries, dates, fromKept, profile), activityOfDays(boundaries, dates, fromPlain, profile));
        reads++;
      }
    }),
    propertyRuns(60),
  );
  assert.ok(reads > 60, `${reads} reads`);
});

/** What a call answers, or the refusal it throws, as a value to compare. */
function outcome<T>(call: () => T): { value: T } | { refused: string } {
  try {
    return { value: call() };
  } catch (error) {
    return { refused: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

/** A few dates, so that a sequence asks for the same ones again (DST changes among them); now and then today or no date of the calendar. */
const dateText = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('2024-03-09', '2024-03-10', '2024-03-31', '2024-10-27', '2024-11-03', '2025-01-01') },
  { weight: 2, arbitrary: fc.constant('today') },
  { weight: 1, arbitrary: fc.constantFrom('2024-02-30', '2024-13-01', '', '2024-1-1', '20240101') },
);
/** Minutes of 2024 and 2025, with their seconds. */
const clock = fc.integer({ min: 1_704_067_200, max: 1_767_225_599 });

it("gives the same dates and refusals with a Fitbit-compatible path's dates kept as worked out each time", () => {
  const rules = { periods: ['1d', '7d', '30d', '1w', '1m'] as const, maxDays: 366 };
  const second = fc.oneof(dateText, fc.constantFrom(...PERIODS, '2d'));
  // The next request a few seconds, minutes or hours later.
  const later = fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 3600, max: 86_400 }));
  // A few paths per sequence, each asked again and again, as polling apps do.
  const paths = fc.array(fc.tuple(dateText, second, zone), { minLength: 1, maxLength: 3 });
  fc.assert(
    fc.property(paths, fc.array(fc.tuple(fc.nat(), later), { minLength: 1, maxLength: 12 }), clock, (asked, calls, start) => {
      const kept = keptDates(rules);
      let now = start;
      for (const [which, wait] of calls) {
        const [first, last, name] = asked[which % asked.length]!;
        now += wait;
        assert.deepEqual(outcome(() => kept(first, last, name, now)), outcome(() => datesOf(first, last, name, now, rules)), `${first}/${last} in ${name} at ${now}`);
      }
    }),
    propertyRuns(150),
  );
});
