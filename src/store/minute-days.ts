/**
 * A person's minutes of steps and heart rate over UTC days, unpacked from the day rows of the series
 * store (db/series-day.ts, db/heart-rate-day.ts), with the spans of their sleep sessions: what the
 * rules that look at each minute (domain/daily-activity.ts) read. The daily summary's statement
 * gives the rows (store/daily-summary.ts).
 */
import { ABSENT, unpackMinutes, type DayMinutes } from '../db/series-day.js';
import { unpackHeartRateMinutes } from '../db/heart-rate-day.js';

/** A minute with no steps stored, in `MinuteDays.steps`. */
export const NO_STEPS = ABSENT;

/** When a sleep session began and ended ([start_time, end_time), Unix seconds). */
export interface SleepSpan {
  start_time: number;
  end_time: number;
}

export interface MinuteDays {
  /** By UTC day start: each minute's steps, or NO_STEPS. A day without a row is absent. */
  steps: ReadonlyMap<number, DayMinutes>;
  /** By UTC day start: each minute's average heart rate, or 0 (no reading). A day without a row is absent. */
  heartRate: ReadonlyMap<number, Uint8Array>;
  /** The sleep sessions that may cover a minute of the days read, by start (sessions never overlap). */
  sleep: readonly SleepSpan[];
}

/** A day row with its packed minutes, as the summary's statement gives it. */
export interface MinuteRow {
  day_start: number | string;
  minutes: Uint8Array;
}

/** The minutes of the rows of steps and of heart rate, and the sleep spans (sorted here by start). */
export function minuteDaysOf(stepRows: readonly MinuteRow[], heartRateRows: readonly MinuteRow[], sleep: SleepSpan[]): MinuteDays {
  const steps = new Map<number, DayMinutes>();
  for (const row of stepRows) steps.set(Number(row.day_start), unpackMinutes(row.minutes));
  const heartRate = new Map<number, Uint8Array>();
  for (const row of heartRateRows) heartRate.set(Number(row.day_start), unpackHeartRateMinutes(row.minutes).avg);
  return { steps, heartRate, sleep: sleep.sort((a, b) => a.start_time - b.start_time) };
}
