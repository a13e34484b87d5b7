/**
 * Heart-rate zones and active minutes per local date (docs/api.md, "Heart-rate zones and active
 * minutes"): each minute of a date, from its local midnight to the next (23 or 25 hours at a change
 * of clocks; from 18:30 UTC in Asia/Kolkata), is looked at once —
 *
 * - a minute with a heart rate falls in the zone of its average (./heart-rate-zones.ts), when the
 *   date has a maximum heart rate; active zone minutes weigh each zone's minutes, and the zone's
 *   calories are those uploaded for its minutes;
 * - a minute inside a sleep session (any stage) is asleep, and in no activity level;
 * - an awake minute with neither steps nor a heart rate stored is unmeasured, and in no level:
 *   nothing says the person wore a device then;
 * - any other minute has the level of its steps (its cadence), raised to fairly active when its
 *   heart rate is in cardio or peak (activityLevelOf); the calories uploaded for the minutes of the
 *   lightly, fairly and very active levels are the date's activity calories.
 *
 * A minute without calories uploaded counts none.
 *
 * The rules are pure functions of the minutes read (store/minute-days.ts); ./active-minutes.ts
 * reads them for a person and a range of dates, and keeps the counts.
 */
import { NO_CALORIES, NO_STEPS, type MinuteDays } from '../store/minute-days.js';
import { SERIES_METRICS } from '../store/series-writer.js';
import { ACTIVE_ZONE_MINUTE_WEIGHTS, CARDIO, ZONE_NAMES, maxHeartRateOn, zoneOf, zonesOf, type HeartRateProfile, type HeartRateZones, type ZoneBounds, type ZoneName } from './heart-rate-zones.js';

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

/** A zone of a date: its bounds in beats per minute, the minutes whose average fell in it and their calories. */
export interface ZoneMinutes extends Readonly<ZoneBounds> {
  readonly minutes: number;
  /** kcal, one decimal: the calories uploaded for those minutes. */
  readonly calories: number;
}

/** One local date's zones and active minutes (kept answers share them: never modified). */
export interface DayActivity {
  /** YYYY-MM-DD. */
  readonly date: string;
  /** The maximum heart rate the date's zones count from; null: none (the profile has neither field). */
  readonly max_heart_rate: number | null;
  /** Per zone, its bounds and minutes; null without a maximum heart rate. */
  readonly heart_rate_zones: Readonly<Record<ZoneName, ZoneMinutes>> | null;
  /** Fat-burn minutes once, cardio and peak minutes twice; null without a maximum heart rate. */
  readonly active_zone_minutes: number | null;
  readonly sedentary_minutes: number;
  readonly lightly_active_minutes: number;
  readonly fairly_active_minutes: number;
  readonly very_active_minutes: number;
  /** kcal, one decimal: the calories uploaded for the lightly, fairly and very active minutes. */
  readonly activity_calories: number;
  /** Minutes inside a sleep session: in no activity level. */
  readonly asleep_minutes: number;
  /** Awake minutes with neither steps nor a heart rate: in no activity level. */
  readonly unmeasured_minutes: number;
}

const DAY_SECONDS = 86_400;
const NO_ZONE = -1;
/** Stored units of calories in a kcal. */
const CALORIE_TENTHS = SERIES_METRICS.calories.scale;

/**
 * The index of the first of `sleep` (sessions by start, never overlapping) that ends after `time`,
 * looking from index `from` on: where the sessions that may cover `time` or later begin.
 */
export function sessionAt(sleep: MinuteDays['sleep'], time: number, from = 0): number {
  let index = from;
  while (index < sleep.length && sleep[index]!.end_time <= time) index++;
  return index;
}

/**
 * The zones and active minutes of the local date `date`, whose minutes start in [from, to), with
 * `zones` (null: none counted); `sleepAt` as sessionAt gives it for `from`. Every minute of a range
 * passes here, a UTC day's stretch at a time, hence the plain loop.
 */
export function activityOfDate(days: MinuteDays, date: string, from: number, to: number, zones: HeartRateZones | null, sleepAt: number): DayActivity {
  const { sleep } = days;
  const zoneCounts = new Uint32Array(ZONE_NAMES.length);
  const levels = new Uint32Array(ACTIVITY_LEVELS.length);
  // Per zone, and per level, the calories of its minutes in tenths of a kcal (as stored).
  const zoneCalories = new Float64Array(ZONE_NAMES.length);
  const levelCalories = new Float64Array(ACTIVITY_LEVELS.length);
  let asleep = 0;
  let unmeasured = 0;
  // The session that covers or comes next after the minute looked at, [asleepFrom, asleepTo): found
  // at the first minute, and again after each one ends.
  let session = sleepAt;
  let asleepFrom = Infinity;
  let asleepTo = -Infinity;
  // The first whole UTC minute at or after `from` (a local midnight may fall inside a minute).
  let time = Math.ceil(from / 60) * 60;
  while (time < to) {
    const dayStart = time - (((time % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
    const steps = days.steps.get(dayStart);
    const heartRate = days.heartRate.get(dayStart);
    const calories = days.calories.get(dayStart);
    const first = (time - dayStart) / 60;
    // The minutes of this UTC day that start before `to`.
    const end = Math.min(1440, Math.ceil((to - dayStart) / 60));
    for (let minute = first; minute < end; minute++, time += 60) {
      const bpm = heartRate === undefined ? 0 : heartRate[minute]!;
      const tenths = calories === undefined ? NO_CALORIES : calories[minute]!;
      const burnt = tenths === NO_CALORIES ? 0 : tenths;
      let zone = NO_ZONE;
      if (bpm !== 0 && zones !== null) {
        zone = zoneOf(zones, bpm);
        zoneCounts[zone]!++;
        zoneCalories[zone]! += burnt;
      }
      if (time >= asleepTo) {
        session = sessionAt(sleep, time, session);
        asleepFrom = sleep[session]?.start_time ?? Infinity;
        asleepTo = sleep[session]?.end_time ?? Infinity;
      }
      if (time >= asleepFrom) {
        asleep++;
        continue;
      }
      const stepCount = steps === undefined ? NO_STEPS : steps[minute]!;
      if (stepCount === NO_STEPS && bpm === 0) unmeasured++;
      else {
        const level = activityLevelOf(stepCount, zone);
        levels[level]!++;
        levelCalories[level]! += burnt;
      }
    }
  }
  return {
    date,
    max_heart_rate: zones && zones.maxHeartRate,
    heart_rate_zones: zones && zoneMinutesOf(zones, zoneCounts, zoneCalories),
    active_zone_minutes: zones && activeZoneMinutesOf(zoneCounts),
    sedentary_minutes: levels[SEDENTARY]!,
    lightly_active_minutes: levels[LIGHTLY_ACTIVE]!,
    fairly_active_minutes: levels[FAIRLY_ACTIVE]!,
    very_active_minutes: levels[VERY_ACTIVE]!,
    activity_calories: kcalOf(levelCalories[LIGHTLY_ACTIVE]! + levelCalories[FAIRLY_ACTIVE]! + levelCalories[VERY_ACTIVE]!),
    asleep_minutes: asleep,
    unmeasured_minutes: unmeasured,
  };
}

/** The zones of each date's maximum heart rate (null: none), made once per maximum of a range. */
export function zonesByDate(profile: HeartRateProfile): (date: string) => HeartRateZones | null {
  const zonesByMaximum = new Map<number, HeartRateZones>();
  return (date) => {
    const maximum = maxHeartRateOn(profile, Number(date.slice(0, 4)));
    if (maximum === null) return null;
    let zones = zonesByMaximum.get(maximum);
    if (zones === undefined) zonesByMaximum.set(maximum, (zones = zonesOf(maximum)));
    return zones;
  };
}

/**
 * The zones and active minutes of each local date whose local midnights are `boundaries`
 * (dates.length = boundaries.length − 1), from the minutes `days` holds (which must cover the UTC
 * days of the boundaries) and the maximum heart rate the profile gives each date.
 */
export function activityOfDays(boundaries: readonly number[], dates: readonly string[], days: MinuteDays, profile: HeartRateProfile): DayActivity[] {
  const zonesOn = zonesByDate(profile);
  const result: DayActivity[] = [];
  let sleepAt = 0;
  for (let index = 0; index < dates.length; index++) {
    const from = boundaries[index]!;
    sleepAt = sessionAt(days.sleep, from, sleepAt);
    result.push(activityOfDate(days, dates[index]!, from, boundaries[index + 1]!, zonesOn(dates[index]!), sleepAt));
  }
  return result;
}

/** kcal from a sum of stored tenths (whole numbers, so exact): one decimal, as the calories series answers. */
const kcalOf = (tenths: number) => tenths / CALORIE_TENTHS;

function zoneMinutesOf(zones: HeartRateZones, minutes: Uint32Array, calories: Float64Array): Record<ZoneName, ZoneMinutes> {
  const entries = ZONE_NAMES.map((name, zone) => [name, { ...zones.bounds[zone]!, minutes: minutes[zone]!, calories: kcalOf(calories[zone]!) }]);
  return Object.fromEntries(entries) as Record<ZoneName, ZoneMinutes>;
}

/** Active zone minutes from the minutes of each zone (ZONE_NAMES order). */
export function activeZoneMinutesOf(minutes: ArrayLike<number>): number {
  let total = 0;
  ZONE_NAMES.forEach((name, zone) => (total += ACTIVE_ZONE_MINUTE_WEIGHTS[name] * minutes[zone]!));
  return total;
}
