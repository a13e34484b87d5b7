/**
 * Distance derived from steps (docs/api.md, "Distance and calories"): a minute with steps and no
 * uploaded distance counts round(steps × stride_length_cm / 100) metres, with the profile's stride
 * length, or DEFAULT_STRIDE_CM when the profile has none. Uploaded distance wins over derived
 * distance for its minute.
 *
 * A distance day row (metric 'distance' in series_days) keeps the UPLOADED minutes in `minutes`,
 * and in `total` and `hours` the sums of the day's distance as read: uploaded plus derived, with the
 * user's stride length at the time of writing. Every write of steps or distance, and every change
 * of the stride length, rewrites those sums under the user's lock, so a daily or hourly series reads
 * them like any other sums; only the minutes of an hour that a bucket boundary cuts are derived
 * while reading (docs/decisions/0014-minute-metrics.md).
 */
import { MINUTES_PER_DAY } from './codec/day.js';
import { ABSENT, emptyDay, type DayMinutes } from './codec/minute-values.js';

/** An adult's average walking step, for a profile without stride_length_cm. */
export const DEFAULT_STRIDE_CM = 75;

export function strideOf(strideLengthCm: number | null | undefined): number {
  return strideLengthCm ?? DEFAULT_STRIDE_CM;
}

/** The metres of a minute of `steps` steps. */
export function derivedMetres(steps: number, strideCm: number): number {
  return Math.round((steps * strideCm) / 100);
}

/**
 * The day's distance per minute as read: the uploaded minute where there is one, else the minute
 * derived from its steps, else absent. Either day may be missing (null).
 */
export function distanceAsRead(uploaded: DayMinutes | null, steps: DayMinutes | null, strideCm: number): DayMinutes {
  const day = uploaded ? uploaded.slice() : emptyDay();
  if (steps) {
    for (let m = 0; m < MINUTES_PER_DAY; m++) {
      if (day[m] === ABSENT && steps[m] !== ABSENT) day[m] = derivedMetres(steps[m]!, strideCm);
    }
  }
  return day;
}

/** True when a day needs a distance row: it has uploaded distance, or steps that derive some. */
export function hasDistance(asRead: DayMinutes): boolean {
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (asRead[m]! > 0) return true;
  return false;
}
