/** The UTC day that the minute encodings pack: 1440 minutes from a midnight. */
export const MINUTES_PER_DAY = 1440;
export const DAY_SECONDS = 86_400;

/** The UTC day holding instant `t` (seconds). */
export function dayStartOf(t: number): number {
  return t - (((t % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
}
