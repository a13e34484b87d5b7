/**
 * Heart-rate zones and active minutes per local date (docs/api.md, "Heart-rate zones and active
 * minutes"): each minute of a date, from its local midnight to the next (23 or 25 hours at a change
 * of clocks; from 18:30 UTC in Asia/Kolkata), is looked at once —
 *
 * - a minute with a heart rate falls in the zone of its average (./heart-rate-zones.ts), when the
 *   date has a maximum heart rate; active zone minutes weigh each zone's minutes;
 * - a minute inside a sleep session (any stage) is asleep, and in no activity level;
 * - an awake minute with neither steps nor a heart rate stored is unmeasured, and in no level:
 *   nothing says the person wore a device then;
 * - any other minute has the level of its steps (its cadence), raised to fairly active when its
 *   heart rate is in cardio or peak (activityLevelOf).
 *
 * The rules are pure functions of the minutes read (store/minute-days.ts); `dailyActivity` reads
 * them for a person and a range of dates.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { SUMMARY_KINDS, type SummaryStore } from '../store/daily-summary.js';
import { NO_STEPS, type MinuteDays } from '../store/minute-days.js';
import { CARDIO, ACTIVE_ZONE_MINUTE_WEIGHTS, ZONE_NAMES, maxHeartRateOn, zoneOf, zonesOf, type HeartRateProfile, type HeartRateZones, type ZoneBounds, type ZoneName } from './heart-rate-zones.js';
import { datesOfDays, type DateRange } from './local-dates.js';
import { keptPlans } from './step-series.js';

/** The activity levels, lowest first: their index is a minute's level. */
export const ACTIVITY_LEVELS = ['sedentary', 'lightly_active', 'fairly_active', 'very_active'] as const;
export const SEDENTARY = 0;
export const LIGHTLY_ACTIVE = 1;
export const FAIRLY_ACTIVE = 2;
export const VERY_ACTIVE = 3;

/**
 * Steps in a minute from which it is lightly, fairly and very active: any step; 100 a minute, about
 * where walking becomes moderate intensity (3 METs); 130, about where it becomes vigorous (6 METs)
 * (Tudor-Locke et al., 2018, "How fast is fast enough?").
 */
export const CADENCE_FROM = { lightly_active: 1, fairly_active: 100, very_active: 130 } as const;

/**
 * The level of an awake minute with data: by its steps (NO_STEPS: none stored, as 0), at least
 * fairly active when its heart rate is in cardio or peak (`zone`; -1: no zone). A heart rate alone
 * lifts a minute no further, and not from fat burn: it also rises without moving (heat, stress,
 * coffee), which steps do not.
 */
export function activityLevelOf(steps: number, zone: number): number {
  let level = SEDENTARY;
  if (steps >= CADENCE_FROM.very_active) level = VERY_ACTIVE;
  else if (steps >= CADENCE_FROM.fairly_active) level = FAIRLY_ACTIVE;
  else if (steps >= CADENCE_FROM.lightly_active) level = LIGHTLY_ACTIVE;
  return zone >= CARDIO && level < FAIRLY_ACTIVE ? FAIRLY_ACTIVE : level;
}

/** A zone of a date: its bounds in beats per minute and the minutes whose average fell in it. */
export interface ZoneMinutes extends ZoneBounds {
  minutes: number;
}

/** One local date's zones and active minutes. */
export interface DayActivity {
  /** YYYY-MM-DD. */
  date: string;
  /** The maximum heart rate the date's zones count from; null: none (the profile has neither field). */
  max_heart_rate: number | null;
  /** Per zone, its bounds and minutes; null without a maximum heart rate. */
  heart_rate_zones: Record<ZoneName, ZoneMinutes> | null;
  /** Fat-burn minutes once, cardio and peak minutes twice; null without a maximum heart rate. */
  active_zone_minutes: number | null;
  sedentary_minutes: number;
  lightly_active_minutes: number;
  fairly_active_minutes: number;
  very_active_minutes: number;
  /** Minutes inside a sleep session: in no activity level. */
  asleep_minutes: number;
  /** Awake minutes with neither steps nor a heart rate: in no activity level. */
  unmeasured_minutes: number;
}

/** The fields of a DayActivity counted minute by minute. */
interface Tally {
  zones: Uint32Array;
  levels: Uint32Array;
  asleep: number;
  unmeasured: number;
}

const DAY_SECONDS = 86_400;

/**
 * Counts the minutes starting in [from, to) into `tally`, with `zones` (null: no zone counted).
 * `sleepAt` is the index of the first session of `days.sleep` that may cover `from` or later;
 * returns the index for the minutes after `to`.
 */
function tallyMinutes(days: MinuteDays, from: number, to: number, zones: HeartRateZones | null, tally: Tally, sleepAt: number): number {
  const { sleep } = days;
  let session = sleepAt;
  let dayStart = NaN;
  let steps: ArrayLike<number> | undefined;
  let heartRate: ArrayLike<number> | undefined;
  // The first whole UTC minute at or after `from` (a local midnight may fall inside a minute).
  for (let time = Math.ceil(from / 60) * 60; time < to; time += 60) {
    const start = time - (((time % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
    if (start !== dayStart) {
      dayStart = start;
      steps = days.steps.get(start);
      heartRate = days.heartRate.get(start);
    }
    const minute = (time - start) / 60;
    const bpm = heartRate === undefined ? 0 : heartRate[minute]!;
    let zone = -1;
    if (bpm !== 0 && zones !== null) {
      zone = zoneOf(zones, bpm);
      tally.zones[zone]!++;
    }
    while (session < sleep.length && sleep[session]!.end_time <= time) session++;
    if (session < sleep.length && sleep[session]!.start_time <= time) {
      tally.asleep++;
      continue;
    }
    const stepCount = steps === undefined ? NO_STEPS : steps[minute]!;
    if (stepCount === NO_STEPS && bpm === 0) {
      tally.unmeasured++;
      continue;
    }
    tally.levels[activityLevelOf(stepCount, zone)]!++;
  }
  return session;
}

/**
 * The zones and active minutes of each local date whose local midnights are `boundaries`
 * (dates.length = boundaries.length − 1), from the minutes `days` holds (which must cover the UTC
 * days of the boundaries) and the maximum heart rate the profile gives each date.
 */
export function activityOfDays(boundaries: readonly number[], dates: readonly string[], days: MinuteDays, profile: HeartRateProfile): DayActivity[] {
  const zonesByMaximum = new Map<number, HeartRateZones>();
  const result: DayActivity[] = [];
  let sleepAt = 0;
  for (let index = 0; index < dates.length; index++) {
    const date = dates[index]!;
    const maximum = maxHeartRateOn(profile, Number(date.slice(0, 4)));
    let zones: HeartRateZones | null = null;
    if (maximum !== null) {
      zones = zonesByMaximum.get(maximum) ?? zonesOf(maximum);
      zonesByMaximum.set(maximum, zones);
    }
    const tally: Tally = { zones: new Uint32Array(ZONE_NAMES.length), levels: new Uint32Array(ACTIVITY_LEVELS.length), asleep: 0, unmeasured: 0 };
    sleepAt = tallyMinutes(days, boundaries[index]!, boundaries[index + 1]!, zones, tally, sleepAt);
    result.push({
      date,
      max_heart_rate: maximum,
      heart_rate_zones: zones && zoneMinutesOf(zones, tally.zones),
      active_zone_minutes: zones && activeZoneMinutesOf(tally.zones),
      sedentary_minutes: tally.levels[SEDENTARY]!,
      lightly_active_minutes: tally.levels[LIGHTLY_ACTIVE]!,
      fairly_active_minutes: tally.levels[FAIRLY_ACTIVE]!,
      very_active_minutes: tally.levels[VERY_ACTIVE]!,
      asleep_minutes: tally.asleep,
      unmeasured_minutes: tally.unmeasured,
    });
  }
  return result;
}

function zoneMinutesOf(zones: HeartRateZones, minutes: Uint32Array): Record<ZoneName, ZoneMinutes> {
  const entries = ZONE_NAMES.map((name, zone) => [name, { ...zones.bounds[zone]!, minutes: minutes[zone]! }]);
  return Object.fromEntries(entries) as Record<ZoneName, ZoneMinutes>;
}

/** Active zone minutes from the minutes of each zone (ZONE_NAMES order). */
export function activeZoneMinutesOf(minutes: ArrayLike<number>): number {
  let total = 0;
  ZONE_NAMES.forEach((name, zone) => (total += ACTIVE_ZONE_MINUTE_WEIGHTS[name] * minutes[zone]!));
  return total;
}

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
 * minutes of steps and heart rate and of their sleep sessions.
 */
export async function dailyActivity(summary: SummaryStore, person: ActivityPerson, range: DateRange): Promise<DayActivity[]> {
  const plan = dayPlanOf(range);
  const figures = await summary.figures(person.userId, plan, range, SUMMARY_KINDS.minutes, null);
  return activityOfDays(plan.boundaries, datesOfDays(plan.boundaries, range.timezone), figures.minuteDays!, person.profile);
}
