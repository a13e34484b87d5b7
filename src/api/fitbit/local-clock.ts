/**
 * The local wall-clock time (`HH:mm:ss`) of each boundary of a bucket plan, as Fitbit's intraday
 * datasets name their entries: from the plan's offset spans, without asking the zone database per
 * minute. A day of 23 or 25 hours has as many hours of entries (a repeated hour repeats its times).
 */
import type { BucketPlan } from '../../calendar/step-buckets.js';

const pad = (n: number) => (n < 10 ? `0${n}` : String(n));
/** `HH:mm:00` for each minute of a day. */
const MINUTE_TEXT = Array.from({ length: 1440 }, (_, m) => `${pad(Math.floor(m / 60))}:${pad(m % 60)}:00`);

/** Seconds after local midnight of each bucket start of `plan` (the last boundary excluded). */
export function localSecondsOfDay(plan: BucketPlan): number[] {
  const { boundaries, spans } = plan;
  const result = new Array<number>(Math.max(0, boundaries.length - 1));
  let span = 0;
  for (let i = 0; i < result.length; i++) {
    const time = boundaries[i]!;
    while (span + 1 < spans.length && spans[span + 1]!.start <= time) span++;
    const local = time + (spans[span]?.offset ?? 0);
    result[i] = ((local % 86_400) + 86_400) % 86_400;
  }
  return result;
}

export function clockText(secondsOfDay: number): string {
  const minute = Math.floor(secondsOfDay / 60);
  const seconds = secondsOfDay % 60;
  return seconds === 0 ? MINUTE_TEXT[minute]! : `${MINUTE_TEXT[minute]!.slice(0, 6)}${pad(seconds)}`;
}
