/**
 * Plausible data of every kind for a made-up person (`stride demo`, test people, the bench): days
 * lived on the local clock of the person's zone — a night's sleep in stages that crosses midnight,
 * steps in walks and runs, calories that follow the steps, a heart rate that follows both, and a
 * morning weighing most days. Seeded, so the same life and seed make the same data.
 *
 * The shapes are those of the API's request bodies (docs/api.md), so the data can be sent through
 * any path that takes an upload.
 */
import { DateTime } from 'luxon';

/** The shape of a person's days, on their local clock. */
export interface Life {
  /** IANA zone the days are lived in. */
  timezone: string;
  /**
   * Going to bed and getting up, in hours from the midnight that starts the day the night ends on:
   * -1 (23:00 the evening before) and 7 for an office worker, 8.5 and 15.5 for a night-shift worker.
   */
  bedtime: number;
  wakeTime: number;
  /** Hours (from the day's midnight, past 24 for after the next one) of walks (commutes, lunch) and, for a runner, of the run. */
  walks: number[];
  run?: number;
  /** The resting heart rate the person's nights settle to. */
  restingBpm: number;
  /** Weight around which the morning weighings wander, kg. */
  weightKg: number;
  /** From this day of the range on (0 = the first), the days are lived in another zone. */
  move?: { day: number; timezone: string };
}

export const OFFICE_WORKER: Life = { timezone: 'Europe/Berlin', bedtime: -1, wakeTime: 7, walks: [8, 12.5, 17.5], restingBpm: 62, weightKg: 74 };
export const RUNNER: Life = { timezone: 'America/New_York', bedtime: -1.5, wakeTime: 6, walks: [12], run: 6.5, restingBpm: 52, weightKg: 66 };
export const NIGHT_SHIFT_WORKER: Life = { timezone: 'Asia/Kolkata', bedtime: 8.5, wakeTime: 15.5, walks: [20.5, 26, 31], restingBpm: 66, weightKg: 70 };
/** Lives in New York, then flies to Tokyo halfway through the 90 days of a test person. */
export const TRAVELLER: Life = { timezone: 'America/New_York', bedtime: -0.5, wakeTime: 7.5, walks: [9, 18], restingBpm: 60, weightKg: 80, move: { day: 45, timezone: 'Asia/Tokyo' } };

/**
 * How the person's device reports. Without it, a reading of heart rate a minute — the data of
 * `stride demo` and the test people. A wearable of today reads the heart every few seconds while
 * its wearer is awake, each reading a few beats off the last (the bench's size row reads one every
 * 20 s: docs/performance.md).
 */
export interface Device {
  /** Seconds between heart-rate readings while awake: 60 (one a minute) or a divisor of it. */
  awakeHeartRateEvery: number;
  /** Beats a minute a reading strays from the heart's course, at most, either way. */
  heartRateNoise: number;
}

/** A wearable that reads the heart every 20 s while awake, each reading within ±4 bpm of the trend. */
export const WEARABLE: Device = { awakeHeartRateEvery: 20, heartRateNoise: 4 };

export interface MinuteSample {
  start_time: number;
  value: number;
}
export interface HeartRateReading {
  time: number;
  bpm: number;
}
export type SleepStage = 'awake' | 'light' | 'deep' | 'rem';
export interface SleepSessionInput {
  start_time: number;
  end_time: number;
  stages: Array<{ stage: SleepStage; start_time: number; end_time: number }>;
}
export interface WeightInput {
  time: number;
  kg: number;
  fat_percent: number;
}

export interface PersonData {
  steps: MinuteSample[];
  calories: MinuteSample[];
  heartrate: HeartRateReading[];
  sleep: SleepSessionInput[];
  weight: WeightInput[];
}

/** A small seeded generator (mulberry32): the same seed gives the same person. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/**
 * The person's data for the `days` local days ending with the one holding `now`, nothing at or
 * after `now`. The night before the first day is included, so the first day has its sleep.
 */
export function synthesizePerson(life: Life, now: number, days: number, seed = 1, device?: Device): PersonData {
  const random = seededRandom(seed);
  const data: PersonData = { steps: [], calories: [], heartrate: [], sleep: [], weight: [] };
  const lastDay = DateTime.fromSeconds(now, { zone: life.timezone }).startOf('day');
  // Midnights of the days and of the day after the last, each on the clock of its zone.
  const midnights = Array.from({ length: days + 1 }, (_, index) => {
    const timezone = life.move && index >= life.move.day ? life.move.timezone : life.timezone;
    return DateTime.fromISO(lastDay.minus({ days: days - 1 - index }).toISODate()!, { zone: timezone });
  });
  const at = (midnight: DateTime, hour: number) => Math.round(midnight.plus({ minutes: Math.round(hour * 60) }).toSeconds() / 60) * 60;
  // Bedtimes first, so that each day's waking hours end where the next night begins.
  const bedtimes = midnights.map((midnight) => at(midnight, life.bedtime + (random() - 0.3) * 1.2));
  for (let index = 0; index < days; index++) {
    const midnight = midnights[index]!;
    const wake = at(midnight, life.wakeTime + (random() - 0.5));
    liveDay(data, life, { midnight, sleepStart: bedtimes[index]!, wake, nextBed: bedtimes[index + 1]!, at: (hour) => at(midnight, hour) }, random, now, device);
  }
  return data;
}

/** The lives by name, as a test person's row names theirs (store/test-people.ts). */
export const LIVES = { office_worker: OFFICE_WORKER, runner: RUNNER, night_shift_worker: NIGHT_SHIFT_WORKER, traveller: TRAVELLER } as const;
export type LifeName = keyof typeof LIVES;

export function isLifeName(name: string): name is LifeName {
  return Object.hasOwn(LIVES, name);
}

/** Which days `synthesizeDates` makes: whole local days from `firstDate` (ISO), `days` of them. */
export interface DateRange {
  firstDate: string;
  days: number;
  /** The date `life.move.day` counts from (default: `firstDate`). */
  lifeBegan?: string;
}

/**
 * Whole days of the person's life, each day drawn from a generator seeded by `seed` and its date
 * alone — unlike synthesizePerson, whose one stream runs through the range — so that the same date
 * always makes the same day whatever range it is made in. A person's later days can so be made
 * piece by piece (a test person's syncs) and fit the days made before.
 */
export function synthesizeDates(life: Life, range: DateRange, seed: number): PersonData {
  const data: PersonData = { steps: [], calories: [], heartrate: [], sleep: [], weight: [] };
  const first = DateTime.fromISO(range.firstDate, { zone: 'UTC' });
  const began = DateTime.fromISO(range.lifeBegan ?? range.firstDate, { zone: 'UTC' });
  const dayOf = (index: number) => {
    const date = first.plus({ days: index });
    const sinceBegan = Math.round(date.diff(began, 'days').days);
    const timezone = life.move && sinceBegan >= life.move.day ? life.move.timezone : life.timezone;
    const midnight = DateTime.fromISO(date.toISODate()!, { zone: timezone });
    const random = seededRandom(Math.imul(seed ^ 0x5bd1e995, 31) ^ Math.round(date.toSeconds() / 86_400));
    const at = (hour: number) => Math.round(midnight.plus({ minutes: Math.round(hour * 60) }).toSeconds() / 60) * 60;
    // The first draw of a date is its bedtime: the night that ends on it starts then.
    return { midnight, random, at, bedtime: at(life.bedtime + (random() - 0.3) * 1.2) };
  };
  let today = dayOf(0);
  for (let index = 0; index < range.days; index++) {
    const tomorrow = dayOf(index + 1);
    const wake = today.at(life.wakeTime + (today.random() - 0.5));
    liveDay(data, life, { midnight: today.midnight, sleepStart: today.bedtime, wake, nextBed: tomorrow.bedtime, at: today.at }, today.random, Infinity);
    today = tomorrow;
  }
  return data;
}

interface DayPlan {
  midnight: DateTime;
  sleepStart: number;
  wake: number;
  nextBed: number;
  /** The instant of a local hour of the day. */
  at: (hour: number) => number;
}

/** One local day: the night that ends on it, then its waking hours until the next bedtime. */
function liveDay(data: PersonData, life: Life, day: DayPlan, random: () => number, now: number, device?: Device): void {
  const { midnight, sleepStart, wake, nextBed, at } = day;
  const sleep = night(sleepStart, wake, random);
  if (sleep.end_time <= now) data.sleep.push(sleep);
  for (const stage of sleep.stages) {
    for (let t = stage.start_time; t < stage.end_time && t < now; t += 60) {
      const drop = stage.stage === 'deep' ? 5 : stage.stage === 'rem' ? -3 : stage.stage === 'awake' ? -8 : 0;
      reading(data, t + Math.floor(random() * 60), life.restingBpm - drop + (random() - 0.5) * 4, now);
      data.calories.push({ start_time: t, value: round1(0.9 + random() * 0.2) });
    }
  }
  const energy = 0.6 + random() * 0.8;
  const activities = life.walks.map((hour) => ({ start: at(hour + (random() - 0.5) * 0.3), minutes: 15 + Math.floor(random() * 20), cadence: 95 + random() * 25 }));
  if (life.run !== undefined && random() < 0.7) activities.push({ start: at(life.run), minutes: 30 + Math.floor(random() * 30), cadence: 155 + random() * 15 });
  let bpm = life.restingBpm + 10;
  for (let t = wake; t < nextBed && t < now; t += 60) {
    const active = activities.find((activity) => t >= activity.start && t < activity.start + activity.minutes * 60);
    let steps = 0;
    if (active) steps = Math.round(active.cadence + (random() - 0.5) * 20);
    else if (random() < 0.15 * energy) steps = Math.round(10 + random() * 60);
    if (steps > 0) data.steps.push({ start_time: t, value: clamp(steps, 0, 1000) });
    // The heart follows the effort with a lag of a few minutes.
    const target = life.restingBpm + 12 + steps * (steps > 140 ? 0.55 : 0.3);
    bpm += (target - bpm) * 0.35 + (random() - 0.5) * 3;
    if (device === undefined) reading(data, t + Math.floor(random() * 60), bpm, now);
    else {
      const every = device.awakeHeartRateEvery;
      for (let slot = t; slot < t + 60; slot += every) reading(data, slot + Math.floor(random() * every), bpm + (random() - 0.5) * 2 * device.heartRateNoise, now);
    }
    data.calories.push({ start_time: t, value: clamp(round1(1.2 + steps * 0.045 + random() * 0.2), 0, 100) });
  }
  if (random() < 0.8 && wake + 900 < now) {
    const drift = Math.sin(midnight.toSeconds() / (86400 * 20)) * 0.8;
    data.weight.push({ time: wake + 600 + Math.floor(random() * 300), kg: Math.round((life.weightKg + drift + (random() - 0.5) * 0.6) * 100) / 100, fat_percent: round1(20 + drift / 2 + (random() - 0.5)) });
  }
}

/** Sleep from `start` to `end` in cycles of about 90 minutes: light, deep (more early), light, REM (more late), now and then awake. */
function night(start: number, end: number, random: () => number): SleepSessionInput {
  const stages: SleepSessionInput['stages'] = [];
  const add = (stage: SleepStage, minutes: number) => {
    const from = stages.length ? stages[stages.length - 1]!.end_time : start;
    const to = Math.min(end, from + Math.max(1, Math.round(minutes)) * 60);
    if (to > from) stages.push({ stage, start_time: from, end_time: to });
  };
  add('awake', 3 + random() * 12);
  for (let cycle = 0; stages[stages.length - 1]!.end_time < end; cycle++) {
    add('light', 20 + random() * 15);
    add('deep', Math.max(5, 40 - cycle * 9 + random() * 10));
    add('light', 10 + random() * 10);
    add('rem', 10 + cycle * 6 + random() * 8);
    if (random() < 0.3) add('awake', 1 + random() * 5);
  }
  return { start_time: start, end_time: end, stages };
}

/** A heart-rate reading at a second of the minute, if that second has passed. */
function reading(data: PersonData, time: number, bpm: number, now: number): void {
  if (time < now) data.heartrate.push({ time, bpm: clamp(Math.round(bpm), 25, 250) });
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
