/**
 * What a write tells the apps and stores, computed the fast way for minutes in time order and
 * checked against the plain way on the same input shuffled or on the zone's calendar asked per
 * range: the runs of minutes (calendar/step-buckets.ts), the local dates they touch and the one
 * range per date an event tells (domain/local-dates.ts) — across both DST changes of Europe/Berlin, in Asia/Kolkata and in a zone
 * whose midnight is skipped — and the minutes heart-rate readings make (domain/heart-rate-readings.ts).
 */
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { it } from 'node:test';
import { bucketRuns } from '../../src/calendar/step-buckets.js';
import { minutesOfReadings } from '../../src/domain/heart-rate-readings.js';
import { changeOfRanges, datesOfRanges } from '../../src/domain/local-dates.js';
import { minutesChange } from '../../src/domain/minute-samples.js';
import { seededRandom } from '../../src/domain/synthetic-person.js';

const utc = (year: number, month: number, day: number, hour = 0) => Date.UTC(year, month - 1, day, hour) / 1000;

function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** Minutes in bursts over `days` days from `start`, ascending, some minutes at a second inside them. */
function burstyTimes(start: number, days: number, random: () => number): number[] {
  const times: number[] = [];
  for (let t = start; t < start + days * 86_400; t += 60) if (random() < 0.2) times.push(t + (random() < 0.1 ? Math.floor(random() * 60) : 0));
  return times;
}

it('finds the same runs of minutes whether the times come in order, repeated or shuffled', () => {
  const random = seededRandom(3);
  const times = burstyTimes(utc(2024, 3, 29), 4, random);
  const runs = bucketRuns(times, 60);
  assert.ok(runs.length > 500);
  assert.deepEqual(bucketRuns(shuffled(times, random), 60), runs);
  assert.deepEqual(bucketRuns([...times, ...times].sort((a, b) => a - b), 60), runs);
  assert.deepEqual(bucketRuns([120, 0, 60, 61, 240], 60), [[0, 180], [240, 300]]);
  assert.deepEqual(bucketRuns([], 60), []);
});

it('names the local dates of runs as the zone\'s calendar does, asked range by range', () => {
  const random = seededRandom(5);
  const cases: Array<[string, number]> = [
    ['Europe/Berlin', utc(2024, 3, 28)],
    ['Europe/Berlin', utc(2024, 10, 25)],
    ['Asia/Kolkata', utc(2024, 6, 1)],
    ['America/Havana', utc(2024, 3, 8)],
    ['UTC', utc(2024, 1, 1)],
  ];
  for (const [zone, start] of cases) {
    const ranges = bucketRuns(burstyTimes(start, 5, random), 60).map(([start_time, end_time]) => ({ start_time, end_time }));
    // One range over a whole day and more, and one ending exactly at a local midnight.
    const midnight = DateTime.fromSeconds(start + 3 * 86_400, { zone }).startOf('day').toSeconds();
    ranges.push({ start_time: start + 6 * 86_400, end_time: start + 8 * 86_400 + 60 }, { start_time: midnight - 120, end_time: midnight });
    const expected = new Set<string>();
    for (const { start_time, end_time } of ranges) {
      for (let t = start_time; t < end_time; t += 60) expected.add(DateTime.fromSeconds(t, { zone }).toISODate()!);
    }
    assert.deepEqual(datesOfRanges(ranges, zone), [...expected].sort(), zone);
    assert.deepEqual(datesOfRanges(shuffled(ranges, random), zone), [...expected].sort(), `${zone}, shuffled`);
  }
});

it('tells per local date one range, from its first changed minute to the end of its last, as the calendar asked minute by minute does', () => {
  const random = seededRandom(7);
  const cases: Array<[string, number]> = [
    ['Europe/Berlin', utc(2026, 3, 27)],
    ['Europe/Berlin', utc(2026, 10, 23)],
    ['Asia/Kolkata', utc(2026, 6, 1)],
    ['America/Havana', utc(2024, 3, 8)],
    ['UTC', utc(2026, 1, 1)],
  ];
  for (const [zone, start] of cases) {
    const times = burstyTimes(start, 4, random);
    // The plain way: each minute's date from the calendar, each date's first and last minute.
    const expected = new Map<string, { start_time: number; end_time: number }>();
    for (const time of times) {
      const minute = time - (time % 60);
      const date = DateTime.fromSeconds(minute, { zone }).toISODate()!;
      const range = expected.get(date);
      if (!range) expected.set(date, { start_time: minute, end_time: minute + 60 });
      else range.end_time = Math.max(range.end_time, minute + 60);
    }
    const dates = [...expected.keys()].sort();
    const change = minutesChange(times, zone);
    assert.deepEqual(change, { dates, ranges: dates.map((date) => expected.get(date)) }, zone);
    assert.ok(change.dates.length <= 6, `${zone}: a range per date, not per run of minutes (${bucketRuns(times, 60).length} runs)`);
    assert.deepEqual(minutesChange(shuffled(times, random), zone), change, `${zone}, shuffled`);
  }
  // A range over a date's midnight is cut there: Berlin's 2026-03-29 has 23 hours, 2026-10-25 has 25.
  const berlin = (from: string, to: string) => changeOfRanges([{ start_time: Date.parse(from) / 1000, end_time: Date.parse(to) / 1000 }], 'Europe/Berlin');
  assert.deepEqual(berlin('2026-03-28T22:00:00Z', '2026-03-30T00:00:00Z'), {
    dates: ['2026-03-28', '2026-03-29', '2026-03-30'],
    ranges: [
      { start_time: utc(2026, 3, 28, 22), end_time: utc(2026, 3, 28, 23) },
      { start_time: utc(2026, 3, 28, 23), end_time: utc(2026, 3, 29, 22) },
      { start_time: utc(2026, 3, 29, 22), end_time: utc(2026, 3, 30) },
    ],
  });
  assert.deepEqual(berlin('2026-10-24T21:00:00Z', '2026-10-26T00:00:00Z').ranges, [
    { start_time: utc(2026, 10, 24, 21), end_time: utc(2026, 10, 24, 22) },
    { start_time: utc(2026, 10, 24, 22), end_time: utc(2026, 10, 25, 23) },
    { start_time: utc(2026, 10, 25, 23), end_time: utc(2026, 10, 26) },
  ]);
  assert.deepEqual(changeOfRanges([], 'UTC'), { dates: [], ranges: [] });
});

it('makes the same minutes of heart-rate readings sent in order or out of it', () => {
  const random = seededRandom(9);
  const readings = burstyTimes(utc(2024, 5, 1), 2, random).flatMap((t) => [t, t + 20, t + 40]).map((time) => ({ time, bpm: 40 + Math.floor(random() * 120) }));
  const minutes = minutesOfReadings(readings);
  assert.deepEqual(minutesOfReadings(shuffled(readings, random)), minutes);
  assert.deepEqual(minutesOfReadings([{ time: 125, bpm: 60 }, { time: 130, bpm: 71 }, { time: 61, bpm: 90 }, { time: 179, bpm: 70 }]), [
    { start_time: 60, avg: 90, min: 90, max: 90 },
    { start_time: 120, avg: 67, min: 60, max: 71 },
  ]);
});
