/**
 * The one walk of the series reads (src/store/series-walk.ts), through its two accumulators: for
 * random minutes over a few UTC days and random plans — Europe/Berlin across its DST changes, the
 * half-hour offset of Asia/Kolkata, UTC — the sums and the heart-rate buckets equal those counted
 * minute by minute, whichever stored parts (totals, hours, minutes) the walk took.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { lastIndexAtOrBefore, planBuckets, type Granularity } from '../../src/calendar/step-buckets.js';
import { DAY_SECONDS, MINUTES_PER_DAY } from '../../src/db/codec/day.js';
import { emptyHeartRateDay } from '../../src/db/codec/heart-rate-minutes.js';
import { packHeartRateDay } from '../../src/db/codec/heart-rate-summary.js';
import { ABSENT, emptyDay, packDay } from '../../src/db/codec/minute-values.js';
import { lowestHalfHour } from '../../src/domain/resting-heart-rate.js';
import { bucketsFromDays } from '../../src/store/heart-rate-series.js';
import { dayDetailFor } from '../../src/store/series-days.js';
import { sumsFromDays } from '../../src/store/series-sums.js';
import { propertyRuns } from '../fuzz/runs.js';

const DAYS = 4;
/** Around the spring change of Europe/Berlin (2024-03-31) and, in another run, its autumn one (2024-10-27). */
const FIRST_DAYS = [Date.UTC(2024, 2, 29) / 1000, Date.UTC(2024, 9, 25) / 1000, Date.UTC(2024, 5, 3) / 1000];

/** Minutes of the DAYS days, each absent or holding a value; stretches of data with gaps, as devices send them. */
const minutes = fc.array(fc.record({ from: fc.nat({ max: DAYS * MINUTES_PER_DAY - 1 }), length: fc.integer({ min: 1, max: 400 }), value: fc.integer({ min: 0, max: 200 }) }), { maxLength: 12 });
const plan = fc.record({
  zone: fc.constantFrom('Europe/Berlin', 'Asia/Kolkata', 'UTC'),
  granularity: fc.constantFrom<Granularity>('day', 'hour', 'minute'),
  firstDay: fc.constantFrom(...FIRST_DAYS),
  start: fc.integer({ min: -DAY_SECONDS, max: DAYS * DAY_SECONDS }),
  length: fc.integer({ min: 1, max: 3 * DAY_SECONDS }),
});

/** Each minute's value (undefined: absent) from the stretches; a later stretch wins. */
function valuesOf(stretches: ReadonlyArray<{ from: number; length: number; value: number }>): Array<number | undefined> {
  const values = new Array<number | undefined>(DAYS * MINUTES_PER_DAY);
  for (const { from, length, value } of stretches) {
    for (let m = from; m < Math.min(from + length, values.length); m++) values[m] = value + (m % 7);
  }
  return values;
}

/** The rows of the days with data that a read of [from, to) would give. */
function rowsOf<Row>(firstDay: number, boundaries: readonly number[], pack: (day: number) => Row | null): Array<Row & { day_start: number }> {
  const rows = [];
  for (let day = 0; day < DAYS; day++) {
    const start = firstDay + day * DAY_SECONDS;
    if (start + DAY_SECONDS <= boundaries[0]! || start >= boundaries[boundaries.length - 1]!) continue;
    const row = pack(day);
    if (row !== null) rows.push({ day_start: start, ...row });
  }
  return rows;
}

it('sums per bucket what the minutes in it hold', () => {
  fc.assert(
    fc.property(minutes, plan, (stretches, { zone, granularity, firstDay, start, length }) => {
      const values = valuesOf(stretches);
      const { boundaries } = planBuckets(zone, granularity, firstDay + start, firstDay + start + length);
      const rows = rowsOf(firstDay, boundaries, (day) => {
        const minutesOfDay = emptyDay();
        for (let m = 0; m < MINUTES_PER_DAY; m++) minutesOfDay[m] = values[day * MINUTES_PER_DAY + m] ?? ABSENT;
        return minutesOfDay.some((value) => value !== ABSENT) ? packDay(minutesOfDay) : null;
      });
      const expected: number[] = [];
      values.forEach((value, m) => {
        const index = lastIndexAtOrBefore(boundaries, firstDay + m * 60);
        if (value === undefined || value === 0 || index < 0 || index >= boundaries.length - 1) return;
        expected[index] = (expected[index] ?? 0) + value;
      });
      assert.deepEqual(sumsFromDays(boundaries, rows), expected, dayDetailFor(boundaries));
    }),
    propertyRuns(150),
  );
});

it('gives each heart-rate bucket the count, sum, min and max of its minutes, and day buckets their resting heart rate', () => {
  fc.assert(
    fc.property(minutes, plan, (stretches, { zone, granularity, firstDay, start, length }) => {
      const values = valuesOf(stretches).map((value) => (value === undefined ? undefined : 40 + (value % 120)));
      const bucketPlan = planBuckets(zone, granularity, firstDay + start, firstDay + start + length);
      const { boundaries } = bucketPlan;
      const rows = rowsOf(firstDay, boundaries, (day) => {
        const heart = emptyHeartRateDay();
        for (let m = 0; m < MINUTES_PER_DAY; m++) {
          const avg = values[day * MINUTES_PER_DAY + m];
          if (avg !== undefined) [heart.min[m], heart.avg[m], heart.max[m]] = [avg - 3, avg, avg + 4];
        }
        return heart.avg.some((avg) => avg !== 0) ? packHeartRateDay(heart, lowestHalfHour) : null;
      });
      const count = boundaries.length - 1;
      const expected = { minutes: new Uint32Array(count), sums: new Float64Array(count), min: new Uint8Array(count), max: new Uint8Array(count) };
      values.forEach((avg, m) => {
        const index = lastIndexAtOrBefore(boundaries, firstDay + m * 60);
        if (avg === undefined || index < 0 || index >= count) return;
        expected.minutes[index]!++;
        expected.sums[index]! += avg;
        if (expected.min[index] === 0 || avg - 3 < expected.min[index]!) expected.min[index] = avg - 3;
        expected.max[index] = Math.max(expected.max[index]!, avg + 4);
      });
      const buckets = bucketsFromDays(bucketPlan, rows);
      assert.deepEqual({ minutes: buckets.minutes, sums: buckets.sums, min: buckets.min, max: buckets.max }, expected);
      if (granularity !== 'day') return assert.equal(buckets.resting, null);
      // The quarter hours wholly inside each local day, from the minutes.
      const resting = boundaries.slice(0, -1).map((from, i) => {
        const quarters = [];
        for (let q = from; q + 900 <= boundaries[i + 1]!; q += 900) quarters.push(q);
        const counts = quarters.map((q) => values.slice((q - firstDay) / 60, (q - firstDay) / 60 + 15).filter((v) => v !== undefined && q >= firstDay).length);
        const sums = quarters.map((q) => (q < firstDay ? 0 : values.slice((q - firstDay) / 60, (q - firstDay) / 60 + 15).reduce<number>((s, v) => s + (v ?? 0), 0)));
        const bpm = lowestHalfHour(counts, sums);
        return bpm === null ? null : Math.round(bpm * 10) / 10;
      });
      assert.deepEqual(buckets.resting, resting);
    }),
    propertyRuns(150),
  );
});
