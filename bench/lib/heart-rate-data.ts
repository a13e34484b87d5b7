/** Plausible heart-rate readings for the benches and the tests of the heart-rate store. */
import { emptyHeartRateDay, type HeartRateMinutes } from '../../src/db/codec/heart-rate-minutes.js';
import { minutesOfReadings, type HeartRateReading } from '../../src/domain/heart-rate-readings.js';

/** Deterministic pseudo-random numbers in [0, 1). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Readings of one waking day from 07:00 to 23:00 UTC of `dayStart`, every `everySeconds`: a heart
 * rate that drifts around 68, with walks (100–125) now and then, and noise of a wrist sensor.
 */
export function wakingDayReadings(dayStart: number, everySeconds: number, seed = 1): HeartRateReading[] {
  const next = random(seed);
  const gauss = () => (next() + next() + next() - 1.5) * 2;
  const readings: HeartRateReading[] = [];
  let base = 68;
  let activity = 0;
  let activityLeft = 0;
  for (let t = dayStart + 7 * 3600; t < dayStart + 23 * 3600; t += everySeconds) {
    if (activityLeft <= 0 && next() < everySeconds / 3600) {
      activity = 30 + next() * 25;
      activityLeft = 600 + next() * 1800;
    }
    activityLeft -= everySeconds;
    const target = activityLeft > 0 ? activity : 0;
    base += (68 + target - base) * Math.min(1, everySeconds / 120) + gauss() * Math.sqrt(everySeconds / 60);
    const bpm = Math.round(base + gauss() * 1.5);
    readings.push({ time: t, bpm: Math.max(25, Math.min(250, bpm)) });
  }
  return readings;
}

export function dayOf(readings: readonly HeartRateReading[], dayStart: number): HeartRateMinutes {
  const day = emptyHeartRateDay();
  for (const minute of minutesOfReadings(readings)) {
    const m = (minute.start_time - dayStart) / 60;
    day.avg[m] = minute.avg;
    day.min[m] = minute.min;
    day.max[m] = minute.max;
  }
  return day;
}

