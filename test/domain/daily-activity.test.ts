/**
 * Heart-rate zones and active minutes per local date (domain/daily-activity.ts), over small
 * hand-made days of minutes: zone edges, active zone minutes, activity levels by cadence and heart
 * rate, minutes asleep and unmeasured, no maximum heart rate, and local dates of 23 and 25 hours
 * (Europe/Berlin) and dates that cut UTC hours (Asia/Kolkata).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { planBuckets } from '../../src/calendar/step-buckets.js';
import {
  FAIRLY_ACTIVE, LIGHTLY_ACTIVE, SEDENTARY, VERY_ACTIVE, activityLevelOf, activityOfDays, type DayActivity,
} from '../../src/domain/daily-activity.js';
import { CARDIO, FAT_BURN, OUT_OF_RANGE, PEAK, type HeartRateProfile } from '../../src/domain/heart-rate-zones.js';
import { datesOfDays } from '../../src/domain/local-dates.js';
import { NO_CALORIES, NO_STEPS, type MinuteDays } from '../../src/store/minute-days.js';

const DAY = 86_400;
const utc = (date: string, hour = 0, minute = 0) => Date.parse(`${date}T00:00:00Z`) / 1000 + hour * 3600 + minute * 60;

/** Minutes by hand: steps and heart rates at given minute starts, and sleep sessions. */
interface HandMadeDays {
  steps?: Array<[time: number, steps: number]>;
  heartRate?: Array<[time: number, bpm: number]>;
  /** Calories in tenths of a kcal, as stored. */
  calories?: Array<[time: number, tenths: number]>;
  sleep?: Array<[start: number, end: number]>;
}

function minuteDays({ steps = [], heartRate = [], calories = [], sleep = [] }: HandMadeDays): MinuteDays {
  const dayOf = (time: number) => time - (time % DAY);
  const stepDays = new Map<number, Int32Array>();
  for (const [time, value] of steps) {
    const day = dayOf(time);
    if (!stepDays.has(day)) stepDays.set(day, new Int32Array(1440).fill(NO_STEPS));
    stepDays.get(day)![(time - day) / 60] = value;
  }
  const heartDays = new Map<number, Uint8Array>();
  for (const [time, bpm] of heartRate) {
    const day = dayOf(time);
    if (!heartDays.has(day)) heartDays.set(day, new Uint8Array(1440));
    heartDays.get(day)![(time - day) / 60] = bpm;
  }
  const calorieDays = new Map<number, Int32Array>();
  for (const [time, tenths] of calories) {
    const day = dayOf(time);
    if (!calorieDays.has(day)) calorieDays.set(day, new Int32Array(1440).fill(NO_CALORIES));
    calorieDays.get(day)![(time - day) / 60] = tenths;
  }
  return { steps: stepDays, heartRate: heartDays, calories: calorieDays, sleep: sleep.map(([start_time, end_time]) => ({ start_time, end_time })) };
}

/** The activity of the local dates first..last of `zone`. */
function activityIn(zone: string, first: string, last: string, days: HandMadeDays, profile: HeartRateProfile): DayActivity[] {
  const from = planBuckets(zone, 'day', utc(first, 12), utc(first, 12) + 1).boundaries[0]!;
  const to = planBuckets(zone, 'day', utc(last, 12), utc(last, 12) + 1).boundaries[1]!;
  const { boundaries } = planBuckets(zone, 'day', from, to);
  return activityOfDays(boundaries, datesOfDays(boundaries, zone), minuteDays(days), profile);
}

const MAX_200: HeartRateProfile = { max_heart_rate: 200, birth_year: null };
const NO_MAXIMUM: HeartRateProfile = { max_heart_rate: null, birth_year: null };

/** The minutes of a date in each level, asleep and unmeasured. */
const levels = (day: DayActivity) => [day.sedentary_minutes, day.lightly_active_minutes, day.fairly_active_minutes, day.very_active_minutes, day.asleep_minutes, day.unmeasured_minutes];
const minutesOf = (day: DayActivity) => levels(day).reduce((a, b) => a + b, 0);
const zoneMinutes = (day: DayActivity) => day.heart_rate_zones && Object.values(day.heart_rate_zones).map((zone) => zone.minutes);

it('gives a minute the level of its cadence, at least fairly active in cardio or peak', () => {
  const cases: Array<[steps: number, zone: number, level: number]> = [
    [NO_STEPS, -1, SEDENTARY],
    [0, -1, SEDENTARY],
    [1, -1, LIGHTLY_ACTIVE],
    [99, -1, LIGHTLY_ACTIVE],
    [100, -1, FAIRLY_ACTIVE],
    [129, -1, FAIRLY_ACTIVE],
    [130, -1, VERY_ACTIVE],
    [1000, -1, VERY_ACTIVE],
    [0, OUT_OF_RANGE, SEDENTARY],
    [0, FAT_BURN, SEDENTARY],
    [50, FAT_BURN, LIGHTLY_ACTIVE],
    [NO_STEPS, CARDIO, FAIRLY_ACTIVE],
    [0, PEAK, FAIRLY_ACTIVE],
    [50, CARDIO, FAIRLY_ACTIVE],
    [120, PEAK, FAIRLY_ACTIVE],
    [140, CARDIO, VERY_ACTIVE],
  ];
  for (const [steps, zone, level] of cases) assert.equal(activityLevelOf(steps, zone), level, `${steps} steps in zone ${zone}`);
});

it('counts zones at their edges, active zone minutes, levels, and leaves out minutes asleep and unmeasured', () => {
  const at = (minute: number) => utc('2024-06-03', 0, minute);
  const [day] = activityIn('UTC', '2024-06-03', '2024-06-03', {
    // With a maximum of 200: fat burn from 100, cardio from 140, peak from 170.
    heartRate: [[at(600), 99], [at(601), 100], [at(602), 139], [at(603), 140], [at(604), 169], [at(605), 170], [at(606), 250], [at(30), 60], [at(31), 150]],
    steps: [[at(600), 0], [at(601), 10], [at(602), 99], [at(603), 0], [at(604), 100], [at(605), 130], [at(606), 129], [at(700), 0], [at(701), 5], [at(30), 0], [at(31), 120]],
    // Asleep 00:00–01:00: its heart rates count in zones, its steps in no level.
    sleep: [[utc('2024-06-02', 23), at(60)]],
  }, MAX_200);
  assert.equal(day!.date, '2024-06-03');
  assert.equal(day!.max_heart_rate, 200);
  assert.deepEqual(day!.heart_rate_zones, {
    out_of_range: { min: 25, max: 99, minutes: 2, calories: 0 },
    fat_burn: { min: 100, max: 139, minutes: 2, calories: 0 },
    cardio: { min: 140, max: 169, minutes: 3, calories: 0 },
    peak: { min: 170, max: 200, minutes: 2, calories: 0 },
  });
  assert.equal(day!.activity_calories, 0, 'no calories uploaded');
  assert.equal(day!.active_zone_minutes, 2 + 3 * 2 + 2 * 2);
  // Sedentary: 600 (99 bpm, 0 steps) and 700 (0 steps). Lightly: 601 (10), 602 (99), 701 (5).
  // Fairly: 603 (0 steps, cardio), 604 (100), 606 (129, peak). Very: 605 (130).
  assert.deepEqual(levels(day!), [2, 3, 3, 1, 60, 1440 - 60 - 9]);
});

it('sums the calories of each zone\'s minutes and of the active minutes, a minute without calories as none', () => {
  const at = (minute: number) => utc('2024-06-03', 0, minute);
  const [day] = activityIn('UTC', '2024-06-03', '2024-06-03', {
    // With a maximum of 200: 99 out of range, 120 fat burn, 150 cardio, 180 peak.
    heartRate: [[at(30), 120], [at(600), 99], [at(601), 120], [at(602), 150], [at(603), 180], [at(604), 120]],
    steps: [[at(600), 0], [at(601), 50], [at(602), 0], [at(603), 140], [at(604), 100], [at(700), 0], [at(701), 5], [at(702), 110]],
    // Tenths of a kcal; 604 (fat burn, fairly active) has none uploaded.
    calories: [[at(30), 9], [at(600), 12], [at(601), 25], [at(602), 48], [at(603), 113], [at(700), 11], [at(701), 14], [at(702), 67], [at(900), 20]],
    // Asleep 00:00–01:00: its calories count in its zone, in no level.
    sleep: [[utc('2024-06-02', 23), at(60)]],
  }, MAX_200);
  assert.deepEqual(
    Object.values(day!.heart_rate_zones!).map((zone) => [zone.minutes, zone.calories]),
    [[1, 1.2], [3, (9 + 25) / 10], [1, 4.8], [1, 11.3]],
  );
  // Lightly: 601 (50 steps), 701 (5). Fairly: 602 (cardio), 604 (100, none uploaded), 702 (110). Very: 603 (140).
  // Not 600 and 700 (sedentary), 30 (asleep) or 900 (unmeasured: calories alone are no measure of moving).
  assert.deepEqual(levels(day!), [2, 2, 3, 1, 60, 1440 - 60 - 8]);
  assert.equal(day!.activity_calories, (25 + 14 + 48 + 67 + 113) / 10);
});

it('counts the calories of a 25-hour date\'s repeated hour in that date (Europe/Berlin)', () => {
  // 27 October 2024: 02:00–03:00 local comes twice, 00:00Z–01:00Z and 01:00Z–02:00Z.
  const calories: Array<[number, number]> = [];
  const steps: Array<[number, number]> = [];
  for (let time = utc('2024-10-27', 0); time < utc('2024-10-27', 2); time += 60) calories.push([time, 10]), steps.push([time, 120]);
  // The last minute of the date (23:59 local, 22:59Z) and the first of the next (23:00Z).
  calories.push([utc('2024-10-27', 22, 59), 30], [utc('2024-10-27', 23), 50]);
  steps.push([utc('2024-10-27', 22, 59), 1], [utc('2024-10-27', 23), 1]);
  const days = activityIn('Europe/Berlin', '2024-10-27', '2024-10-28', { steps, calories }, NO_MAXIMUM);
  assert.deepEqual(days.map((day) => [day.date, day.fairly_active_minutes, day.lightly_active_minutes, day.activity_calories]), [
    ['2024-10-27', 120, 1, (120 * 10 + 30) / 10],
    ['2024-10-28', 0, 1, 50 / 10],
  ]);
});

it('counts no zones without a maximum heart rate, and the levels all the same', () => {
  const at = (minute: number) => utc('2024-06-03', 0, minute);
  const [day] = activityIn('UTC', '2024-06-03', '2024-06-03', { heartRate: [[at(100), 180], [at(101), 90]], steps: [[at(101), 140], [at(102), 0]] }, NO_MAXIMUM);
  assert.equal(day!.max_heart_rate, null);
  assert.equal(day!.heart_rate_zones, null);
  assert.equal(day!.active_zone_minutes, null);
  // 180 bpm without a maximum is no zone: with no steps it is sedentary, as a minute of 0 steps.
  assert.deepEqual(levels(day!), [2, 0, 0, 1, 0, 1437]);
});

it('counts a date with no data as all unmeasured, no minute sedentary', () => {
  const [day] = activityIn('UTC', '2024-06-03', '2024-06-03', {}, MAX_200);
  assert.deepEqual(levels(day!), [0, 0, 0, 0, 0, 1440]);
  assert.deepEqual(zoneMinutes(day!), [0, 0, 0, 0]);
  assert.equal(day!.active_zone_minutes, 0);
});

it('counts a minute asleep when it starts inside a session, whatever the stage, and its date by its start', () => {
  // A session from 22:00:30 to 06:00:30: the minute of 22:00 is awake, that of 06:00 asleep.
  const start = utc('2024-06-03', 22) + 30;
  const end = utc('2024-06-04', 6) + 30;
  const steps: Array<[number, number]> = [];
  for (let time = utc('2024-06-03'); time < utc('2024-06-05'); time += 60) steps.push([time, 0]);
  const [first, second] = activityIn('UTC', '2024-06-03', '2024-06-04', { steps, sleep: [[start, end]] }, NO_MAXIMUM);
  assert.equal(first!.asleep_minutes, 119);
  assert.equal(first!.sedentary_minutes, 1440 - 119);
  assert.equal(second!.asleep_minutes, 361);
  assert.equal(second!.sedentary_minutes, 1440 - 361);
});

it('counts the maximum of each date from the year of birth, a beat lower after New Year', () => {
  const heartRate: Array<[number, number]> = [[utc('2023-12-31', 12), 126], [utc('2024-01-01', 12), 126]];
  const [before, after] = activityIn('UTC', '2023-12-31', '2024-01-01', { heartRate }, { birth_year: 1984, max_heart_rate: null });
  // 220 − 39 = 181: cardio from ⌈126.7⌉ = 127, so 126 is fat burn; 220 − 40 = 180: cardio from 126.
  assert.deepEqual([before!.max_heart_rate, before!.heart_rate_zones!.cardio.min, before!.heart_rate_zones!.fat_burn.minutes], [181, 127, 1]);
  assert.deepEqual([after!.max_heart_rate, after!.heart_rate_zones!.cardio.min, after!.heart_rate_zones!.cardio.minutes], [180, 126, 1]);
});

it('counts the 23 and 25 hours of the dates of a change of clocks in Europe/Berlin', () => {
  // Every minute of the UTC days around both changes has 0 steps and 60 bpm.
  const every: HandMadeDays = { steps: [], heartRate: [] };
  for (const date of ['2024-03-29', '2024-03-30', '2024-03-31', '2024-04-01', '2024-10-25', '2024-10-26', '2024-10-27', '2024-10-28']) {
    for (let time = utc(date); time < utc(date) + DAY; time += 60) every.steps!.push([time, 0]), every.heartRate!.push([time, 60]);
  }
  const spring = activityIn('Europe/Berlin', '2024-03-30', '2024-04-01', every, MAX_200);
  assert.deepEqual(spring.map((day) => [day.date, day.sedentary_minutes, zoneMinutes(day)![0]]), [
    ['2024-03-30', 1440, 1440],
    ['2024-03-31', 1380, 1380],
    ['2024-04-01', 1440, 1440],
  ]);
  const autumn = activityIn('Europe/Berlin', '2024-10-26', '2024-10-28', every, MAX_200);
  assert.deepEqual(autumn.map((day) => [day.date, day.sedentary_minutes, zoneMinutes(day)![0]]), [
    ['2024-10-26', 1440, 1440],
    ['2024-10-27', 1500, 1500],
    ['2024-10-28', 1440, 1440],
  ]);
  for (const day of [...spring, ...autumn]) assert.equal(minutesOf(day), day.sedentary_minutes);
});

it('puts the minutes around local midnight on their local dates in Europe/Berlin and Asia/Kolkata', () => {
  // Berlin, 2024-03-31 (UTC+1 until 01:00 UTC, then UTC+2): 23:59 on the 30th is 22:59 UTC, the
  // 31st begins at 23:00 UTC on the 30th and ends at 22:00 UTC on the 31st.
  const berlin = activityIn('Europe/Berlin', '2024-03-30', '2024-04-01', {
    steps: [[utc('2024-03-30', 22, 59), 140], [utc('2024-03-30', 23), 110], [utc('2024-03-31', 21, 59), 50], [utc('2024-03-31', 22), 5]],
  }, NO_MAXIMUM);
  assert.deepEqual(berlin.map((day) => [day.date, day.very_active_minutes, day.fairly_active_minutes, day.lightly_active_minutes]), [
    ['2024-03-30', 1, 0, 0],
    ['2024-03-31', 0, 1, 1],
    ['2024-04-01', 0, 0, 1],
  ]);
  // Kolkata (UTC+5:30): a date begins at 18:30 UTC the day before, halfway through a UTC hour, and
  // its minutes lie on two UTC days.
  const kolkata = activityIn('Asia/Kolkata', '2024-06-03', '2024-06-04', {
    steps: [[utc('2024-06-02', 18, 29), 140], [utc('2024-06-02', 18, 30), 110], [utc('2024-06-03', 18, 29), 50], [utc('2024-06-03', 18, 30), 200]],
    heartRate: [[utc('2024-06-02', 18, 29), 150], [utc('2024-06-02', 18, 30), 150], [utc('2024-06-03', 0), 150], [utc('2024-06-03', 18, 29), 150]],
    sleep: [[utc('2024-06-02', 18), utc('2024-06-02', 18, 31)]],
  }, MAX_200);
  assert.deepEqual(kolkata.map((day) => [day.date, day.asleep_minutes, day.very_active_minutes, day.fairly_active_minutes, day.lightly_active_minutes, zoneMinutes(day)]), [
    // 18:30 UTC on the 2nd is asleep (its zone still counts); 00:00 UTC on the 3rd has a heart
    // rate alone, in cardio: fairly active; 18:29 UTC on the 3rd, 50 steps in cardio: fairly active.
    ['2024-06-03', 1, 0, 2, 0, [0, 0, 3, 0]],
    ['2024-06-04', 0, 1, 0, 0, [0, 0, 0, 0]],
  ]);
  for (const day of kolkata) assert.equal(minutesOf(day), 1440);
});
