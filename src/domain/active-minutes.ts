/**
 * The zones and active minutes of a person's local dates (./daily-activity.ts): `dailyActivity`
 * reads and counts them for a range of dates, and what the daily summary and any other route count
 * is kept per person and date with what it was counted from. A date's counts are a pure function of the minutes of the UTC days
 * it touches, the sleep sessions that cover it and its maximum heart rate; counting them looks at
 * every minute (about 15 µs a date), and a summary of the last 30 days asks for the same dates
 * again and again, of which only today changes.
 *
 * The minutes come as arrays that the store keeps between reads and replaces when a day's stored
 * bytes change (store/minute-days.ts): so a date is counted again only when an array it was
 * counted from is not the same object, a session covering it differs, or its maximum does. Arrays
 * are told apart by a number given to each the first time it is seen, so that nothing kept here
 * holds an array alive. Nothing is invalidated, so nothing can go stale. Bounded by the dates
 * kept, least recently used first out.
 *
 * The counts kept are a speed mechanism (switch `day-activity`, src/speed-switches.ts) needed by
 * row 10 of `npm run bench` (the daily summary of 30 days); the plain path (plainDayActivity)
 * counts every date; test/fuzz/speed-caches shows both give the same counts.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { SUMMARY_KINDS, type SummaryStore } from '../store/daily-summary.js';
import type { MinuteDays } from '../store/minute-days.js';
import { activityOfDate, sessionAt, zonesByDate, type DayActivity } from './daily-activity.js';
import type { HeartRateProfile } from './heart-rate-zones.js';
import { datesOfDays, type DateRange } from './local-dates.js';
import { keptPlans } from './kept-plans.js';
import { isOn } from '../speed-switches.js';

/** About 10 MB of counts, per process. */
export const MAX_KEPT_DATES = 10_000;

const DAY_SECONDS = 86_400;

/** The activity of the dates of `boundaries`, as activityOfDays counts it, for `userId`. */
export type KeptDayActivity = (userId: string, boundaries: readonly number[], dates: readonly string[], days: MinuteDays, profile: HeartRateProfile) => DayActivity[];

/** A number for each array of minutes seen (0: no array, a day without data). */
const arrayNumbers = new WeakMap<object, number>();
let lastArrayNumber = 0;

function numberOf(minutes: ArrayLike<number> | undefined): number {
  if (minutes === undefined) return 0;
  let number = arrayNumbers.get(minutes);
  if (number === undefined) arrayNumbers.set(minutes, (number = ++lastArrayNumber));
  return number;
}

/**
 * What a date [from, to) is counted from, as numbers: its maximum heart rate (0: none), the
 * numbers of the arrays (steps, heart rate, calories) of each UTC day it touches, and the start and end of each session from
 * `sleepAt` on that covers any of it.
 */
function inputsOf(days: MinuteDays, from: number, to: number, maximum: number, sleepAt: number): number[] {
  const inputs = [maximum];
  for (let day = from - (((from % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS); day < to; day += DAY_SECONDS) {
    inputs.push(numberOf(days.steps.get(day)), numberOf(days.heartRate.get(day)), numberOf(days.calories.get(day)));
  }
  for (let index = sleepAt; index < days.sleep.length && days.sleep[index]!.start_time < to; index++) {
    inputs.push(days.sleep[index]!.start_time, days.sleep[index]!.end_time);
  }
  return inputs;
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function keptDayActivity(maxDates = MAX_KEPT_DATES): KeptDayActivity {
  // A Map iterates in insertion order: a date found is moved to the end, the first is the oldest.
  const kept = new Map<string, { inputs: number[]; activity: DayActivity }>();
  return (userId, boundaries, dates, days, profile) => {
    const zonesOn = zonesByDate(profile);
    const result: DayActivity[] = [];
    let sleepAt = 0;
    for (let index = 0; index < dates.length; index++) {
      const date = dates[index]!;
      const from = boundaries[index]!;
      const to = boundaries[index + 1]!;
      sleepAt = sessionAt(days.sleep, from, sleepAt);
      const zones = zonesOn(date);
      const inputs = inputsOf(days, from, to, zones === null ? 0 : zones.maxHeartRate, sleepAt);
      // The same instants are midnights of two dates in zones 24 hours apart (Kiritimati, Honolulu).
      const key = `${userId} ${date} ${from} ${to}`;
      const found = kept.get(key);
      if (found !== undefined) kept.delete(key);
      if (found !== undefined && sameNumbers(found.inputs, inputs)) {
        kept.set(key, found);
        result.push(found.activity);
        continue;
      }
      const activity = activityOfDate(days, date, from, to, zones, sleepAt);
      kept.set(key, { inputs, activity });
      if (kept.size > maxDates) kept.delete(kept.keys().next().value!);
      result.push(activity);
    }
    return result;
  };
}

/** The plain path: every date counted from its minutes. */
export const plainDayActivity: KeptDayActivity = (_userId, boundaries, dates, days, profile) => {
  const zonesOn = zonesByDate(profile);
  let sleepAt = 0;
  return dates.map((date, index) => {
    const from = boundaries[index]!;
    sleepAt = sessionAt(days.sleep, from, sleepAt);
    return activityOfDate(days, date, from, boundaries[index + 1]!, zonesOn(date), sleepAt);
  });
};

/** The counts of this process, shared by every route that counts (counted each time when STRIDE_PLAIN switches them off). */
export const countedActivity: KeptDayActivity = isOn('day-activity') ? keptDayActivity() : plainDayActivity;

/** Whose zones and active minutes: the person's id and the profile fields the maximum comes from (a bearer check's `auth` will do). */
export interface ActivityPerson {
  userId: string;
  profile: HeartRateProfile;
}

const planOf = keptPlans();

/** The local days of a range of dates, as the daily summary plans them. */
export function dayPlanOf(range: DateRange): BucketPlan {
  return planOf({ timezone: range.timezone, granularity: 'day', start: range.from, end: range.to });
}

/**
 * The zones and active minutes of each local date of `range` (parseDateRange or keptDateRanges
 * make one from `start_date`, `end_date` and a zone), oldest first: one read of the person's
 * minutes of steps and heart rate and of their sleep sessions, each date counted as
 * activityOfDays counts it. The objects may be shared with other answers: never modify them.
 */
export async function dailyActivity(summary: SummaryStore, person: ActivityPerson, range: DateRange): Promise<DayActivity[]> {
  const plan = dayPlanOf(range);
  const figures = await summary.figures(person.userId, plan, range, SUMMARY_KINDS.minutes, null);
  return countedActivity(person.userId, plan.boundaries, datesOfDays(plan.boundaries, range.timezone), figures.minuteDays!, person.profile);
}
