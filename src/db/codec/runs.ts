/**
 * The runs of a day's present minutes, as both minute encodings write them: alternating counts of
 * absent minutes skipped and of present minutes that follow, until the last present minute.
 */
import { MINUTES_PER_DAY } from './day.js';

/** Calls `visit(skipped, present, start)` for each run of minutes m with `isPresent(m)`, in order. */
export function forEachRun(isPresent: (minute: number) => boolean, visit: (skipped: number, present: number, start: number) => void): void {
  let m = 0;
  while (m < MINUTES_PER_DAY) {
    const runStart = m;
    while (m < MINUTES_PER_DAY && !isPresent(m)) m++;
    if (m === MINUTES_PER_DAY) return;
    const start = m;
    while (m < MINUTES_PER_DAY && isPresent(m)) m++;
    visit(start - runStart, m - start, start);
  }
}

/** The first minute after a run that starts `skipped` after `minute` and holds `present`; refuses a run past the day. */
export function runEnd(minute: number, skipped: number, present: number, what: string): number {
  const end = minute + skipped + present;
  if (end > MINUTES_PER_DAY) throw new Error(`${what} holds more than 1440 minutes`);
  return end;
}
