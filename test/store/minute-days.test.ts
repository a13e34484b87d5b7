/**
 * Unpacked minute days kept between reads (store/minute-days.ts): the minutes the rows hold, a day
 * read again with the same bytes not unpacked again, a day with other bytes unpacked afresh, each
 * person's days their own, and the bytes kept bounded.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { emptyHeartRateDay, unpackHeartRateMinutes } from '../../src/db/codec/heart-rate-minutes.js';
import { packHeartRateDay } from '../../src/db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../../src/domain/resting-heart-rate.js';
import { emptyDay, packDay, unpackMinutes } from '../../src/db/codec/minute-values.js';
import { NO_CALORIES, NO_STEPS, keptMinuteDays } from '../../src/store/minute-days.js';

const DAY = 1_700_006_400; // a UTC midnight

function stepsRow(values: Record<number, number>, day = DAY) {
  const minutes = emptyDay();
  for (const [minute, value] of Object.entries(values)) minutes[Number(minute)] = value;
  return { day_start: day, minutes: packDay(minutes).minutes };
}

function heartRow(values: Record<number, number>, day = DAY) {
  const minutes = emptyHeartRateDay();
  for (const [minute, bpm] of Object.entries(values)) {
    minutes.avg[Number(minute)] = bpm;
    minutes.min[Number(minute)] = bpm - 3;
    minutes.max[Number(minute)] = bpm + 4;
  }
  return { day_start: String(day), minutes: packHeartRateDay(minutes, lowestHalfHour).minutes };
}

it('gives the minutes the rows hold, with sessions by start', () => {
  // Enough minutes for the packed days to be deflated, and some raw.
  const steps: Record<number, number> = {};
  const bpm: Record<number, number> = {};
  for (let m = 300; m < 1100; m += 3) (steps[m] = (m * 7) % 1001), (bpm[m] = 40 + (m % 150));
  const rows = [stepsRow(steps), stepsRow({ 0: 0, 1439: 1000 }, DAY + 86_400)];
  const hearts = [heartRow(bpm), heartRow({ 5: 61 }, DAY + 86_400)];
  const calories = [stepsRow({ 0: 12, 700: 1000 })];
  const sleep = [{ start_time: DAY + 7200, end_time: DAY + 9000 }, { start_time: DAY - 3600, end_time: DAY + 600 }];
  const days = keptMinuteDays().daysOf('ada', rows, hearts, calories, sleep);
  for (const row of rows) assert.deepEqual(Array.from(days.steps.get(row.day_start)!), Array.from(unpackMinutes(row.minutes)));
  for (const row of hearts) assert.deepEqual(Array.from(days.heartRate.get(Number(row.day_start))!), Array.from(unpackHeartRateMinutes(row.minutes).avg));
  assert.equal(days.steps.get(DAY + 86_400)![2], NO_STEPS);
  assert.deepEqual([days.calories.get(DAY)![0], days.calories.get(DAY)![700], days.calories.get(DAY)![1], days.calories.has(DAY + 86_400)], [12, 1000, NO_CALORIES, false]);
  assert.deepEqual(days.sleep.map((s) => s.start_time), [DAY - 3600, DAY + 7200]);
});

it('unpacks a day read again with the same bytes only once, and one with other bytes afresh', () => {
  const kept = keptMinuteDays();
  const first = kept.daysOf('ada', [stepsRow({ 10: 50 })], [heartRow({ 10: 120 })], [], []);
  const again = kept.daysOf('ada', [stepsRow({ 10: 50 })], [heartRow({ 10: 120 })], [], []);
  assert.equal(again.steps.get(DAY), first.steps.get(DAY), 'the same unpacked day');
  assert.equal(again.heartRate.get(DAY), first.heartRate.get(DAY));
  const changed = kept.daysOf('ada', [stepsRow({ 10: 51 })], [heartRow({ 10: 120, 11: 90 })], [], []);
  assert.equal(changed.steps.get(DAY)![10], 51);
  assert.equal(changed.heartRate.get(DAY)![11], 90);
  assert.equal(first.steps.get(DAY)![10], 50, 'a day given out is never changed');
  // Another person's day with the same bytes is theirs.
  const other = kept.daysOf('grace', [stepsRow({ 10: 50 })], [], [], []);
  assert.notEqual(other.steps.get(DAY), first.steps.get(DAY));
  assert.deepEqual(Array.from(other.steps.get(DAY)!), Array.from(first.steps.get(DAY)!));
});

it('keeps at most its bytes, the least recently read first out', () => {
  const kept = keptMinuteDays(3 * 4000);
  const rows = Array.from({ length: 10 }, (_, i) => stepsRow({ [i]: i + 1 }, DAY + i * 86_400));
  const firstRead = kept.daysOf('ada', rows, [], [], []);
  assert.ok(kept.bytes <= 3 * 4000 && kept.bytes > 0, `${kept.bytes} bytes kept`);
  // The last days read are kept; the first ones are not.
  const last = rows[rows.length - 1]!;
  assert.equal(kept.daysOf('ada', [last], [], [], []).steps.get(last.day_start), firstRead.steps.get(last.day_start));
  assert.notEqual(kept.daysOf('ada', [rows[0]!], [], [], []).steps.get(DAY), firstRead.steps.get(DAY));
  // A day larger than everything kept is unpacked, not kept.
  const tiny = keptMinuteDays(100);
  assert.equal(tiny.daysOf('ada', [rows[0]!], [], [], []).steps.get(DAY)![0], 1);
  assert.equal(tiny.bytes, 0);
});
