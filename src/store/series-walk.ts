/**
 * The one walk of every series read (sums: series-sums.ts; heart rate: heart-rate-series.ts): day
 * rows against a plan's bucket boundaries, each day handed to the metric's accumulator in the
 * coarsest stored parts that no boundary cuts — the whole day (its `total`: a daily series in UTC),
 * else each hour (Europe/Berlin, hourly series), else, only for an hour that a boundary cuts
 * (Asia/Kolkata, minute series), its minutes. A boundary that is not a whole UTC minute (historic
 * local mean time offsets) counts each minute in the bucket where it starts.
 */
import { DAY_SECONDS } from '../db/codec/day.js';
import type { DayRow } from './series-days.js';

/**
 * What a metric does with the parts of its days, each part within one bucket (an index of the
 * plan). A day a boundary cuts is unpacked once: its hours, and its minutes once an hour is cut.
 */
export interface BucketAccumulator<Hours, Minutes> {
  /** `row`'s whole UTC day falls in bucket `index`. */
  day(index: number, row: DayRow): void;
  hoursOf(row: DayRow): Hours;
  minutesOf(row: DayRow): Minutes;
  /** Hour `hour` (0–23) of a cut day falls in bucket `index`; minute `minute` (0–1439), of a cut hour. */
  hour(index: number, hours: Hours, hour: number): void;
  minute(index: number, minutes: Minutes, minute: number): void;
}

/** Walks `rows` (by day_start, UTC midnights) against `boundaries`; parts outside every bucket are left out. */
export function walkDays<Hours, Minutes>(boundaries: readonly number[], rows: readonly DayRow[], into: BucketAccumulator<Hours, Minutes>): void {
  const buckets = boundaries.length - 1;
  // Rows, hours and minutes come in time order, so the bucket of an instant is found walking forward.
  let bucket = -1;
  const bucketOf = (t: number) => {
    while (bucket < buckets && boundaries[bucket + 1]! <= t) bucket++;
    return bucket;
  };
  // Whether a boundary falls inside (t, end) of the bucket just found.
  const cutBefore = (end: number) => bucket < buckets && boundaries[bucket + 1]! < end;
  const within = (index: number) => index >= 0 && index < buckets;
  for (const row of rows) {
    const day = Number(row.day_start);
    const first = bucketOf(day);
    if (!cutBefore(day + DAY_SECONDS)) {
      if (within(first)) into.day(first, row);
      continue;
    }
    const hours = into.hoursOf(row);
    let minutes: Minutes | undefined;
    for (let hour = 0; hour < 24; hour++) {
      const start = day + hour * 3600;
      const index = bucketOf(start);
      if (!cutBefore(start + 3600)) {
        if (within(index)) into.hour(index, hours, hour);
        continue;
      }
      minutes ??= into.minutesOf(row);
      for (let m = hour * 60; m < hour * 60 + 60; m++) {
        const minuteIndex = bucketOf(day + m * 60);
        if (within(minuteIndex)) into.minute(minuteIndex, minutes, m);
      }
    }
  }
}
