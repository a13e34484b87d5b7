/**
 * Which steps of a file are written together. A step is one local date of the archive, but the
 * series store keeps a row per UTC day, so the steps of two neighbouring dates may both write one
 * row: a heart-rate file holds a UTC day, which in Europe/Berlin is the end of one local date and
 * the start of the next. Written one step at a time, such a row is written twice — on PostgreSQL
 * a dead row version the size of the day, left until a vacuum. So consecutive steps whose minutes
 * share a UTC day are written in one transaction, which writes each row once. Steps of other kinds
 * (sleep, weight), and steps that share no row, stay one to a transaction.
 */
import type { ReadStep } from './read-files.js';

const DAY_SECONDS = 86_400;

/** The UTC days (day numbers) a step's minutes fall on; none for a step of another kind. */
function utcDaysOf(read: ReadStep): Set<number> {
  const starts = read.kind === 'steps' || read.kind === 'distance' || read.kind === 'calories' ? read.samples : read.kind === 'heartrate' ? read.minutes : [];
  return new Set(starts.map((record) => Math.floor(record.start_time / DAY_SECONDS)));
}

/**
 * The file's steps from `from` on, in groups written together: each [first, end) of indices of
 * `steps`, in order, covering every step once.
 */
export function stepGroups(steps: readonly ReadStep[], from: number): Array<[number, number]> {
  const groups: Array<[number, number]> = [];
  let days = new Set<number>();
  for (let i = from; i < steps.length; i++) {
    const own = utcDaysOf(steps[i]!);
    const last = groups[groups.length - 1];
    if (last !== undefined && [...own].some((day) => days.has(day))) {
      last[1] = i + 1;
      for (const day of own) days.add(day);
    } else {
      groups.push([i, i + 1]);
      days = own;
    }
  }
  return groups;
}
