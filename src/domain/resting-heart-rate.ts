/**
 * The resting heart rate (docs/api.md, "Resting heart rate"): the lowest mean of the minute avgs in
 * a half hour made of two consecutive quarter hours, counting a half hour only when at least
 * RESTING_MIN_MINUTES of its 30 minutes hold data.
 *
 * A rule of the domain that needs nothing else: .dependency-cruiser.cjs places this module in the
 * foundation layer, so that the store (which keeps each UTC day's figure in its packed total) and
 * the series walkers apply this same rule.
 */
export const RESTING_MIN_MINUTES = 20;

/**
 * `counts` and `sums` list the minutes with data and the sum of their avgs per quarter hour, in
 * time order (the quarters of a local day, over one UTC midnight or more); only the quarters in
 * [from, to) count. Null when no half hour counts.
 */
export function lowestHalfHour(counts: ArrayLike<number>, sums: ArrayLike<number>, from = 0, to = counts.length): number | null {
  let best: number | null = null;
  for (let q = from; q + 1 < to; q++) {
    const count = counts[q]! + counts[q + 1]!;
    if (count < RESTING_MIN_MINUTES) continue;
    const mean = (sums[q]! + sums[q + 1]!) / count;
    if (best === null || mean < best) best = mean;
  }
  return best;
}
