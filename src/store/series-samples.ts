/**
 * The samples of the series store's minute metrics as uploads, imports and exports carry them, and
 * what the one writer (store/series-writer.ts) does with the days of each codec of
 * db/series-metrics.ts: unpack, make empty, compare and pack a day; put a sample in a minute, tell
 * whether a minute holds data, clear it, read it back as a sample. A new codec adds its entry here.
 */
import { SERIES_METRICS, type SeriesMetric } from '../db/series-metrics.js';
import { ABSENT, emptyDay, isEmptyDay, packDay, sameMinutes, unpackMinutes } from '../db/codec/minute-values.js';
import { emptyHeartRateDay, minutesWithData, unpackHeartRateMinutes, type HeartRateMinutes } from '../db/codec/heart-rate-minutes.js';
import { packHeartRateDay } from '../db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../domain/resting-heart-rate.js';
import type { DayRowValues } from './series-rows.js';

/** The range of a reading, in beats per minute (docs/api.md, "Heart-rate upload"). */
export { MAX_BPM, MIN_BPM } from '../db/codec/heart-rate-minutes.js';

/** One minute of a sum metric (docs/api.md): the minute's start, in seconds since the epoch, and its value. */
export interface MinuteSample {
  start_time: number;
  value: number;
}

/**
 * One minute of heart rate (docs/api.md): the minute's start in Unix seconds, and its readings'
 * avg, min and max.
 */
export interface HeartRateMinute {
  start_time: number;
  avg: number;
  min: number;
  max: number;
}

/** The sample of each codec of db/series-metrics.ts (every codec has one: SampleOf indexes it). */
interface SampleOfCodec {
  'minute-values': MinuteSample;
  'heart-rate-minutes': HeartRateMinute;
}

/** The sample of `M`, by its codec. */
export type SampleOf<M extends SeriesMetric> = SampleOfCodec[(typeof SERIES_METRICS)[M]['codec']];

/** What the writer does with an unpacked `Day` of one codec; `m` is a minute of the UTC day (0–1439). */
export interface DayEdits<Day, Sample> {
  unpack(bytes: Uint8Array): Day;
  empty(): Day;
  copy(day: Day): Day;
  same(a: Day, b: Day): boolean;
  isEmpty(day: Day): boolean;
  pack(day: Day): Omit<DayRowValues, 'day_start'>;
  holds(day: Day, m: number): boolean;
  put(day: Day, m: number, sample: Sample): void;
  clear(day: Day, m: number): void;
  sampleAt(day: Day, m: number, start_time: number): Sample;
}

/** Values cross as the API's units (kcal) and are stored as integers of 1/scale of them (tenths of a kcal). */
const minuteValues = (scale: number): DayEdits<Int32Array, MinuteSample> => ({
  unpack: unpackMinutes,
  empty: emptyDay,
  copy: (day) => day.slice(),
  same: sameMinutes,
  isEmpty: isEmptyDay,
  pack: packDay,
  holds: (day, m) => day[m] !== ABSENT,
  put: (day, m, sample) => void (day[m] = Math.round(sample.value * scale)),
  clear: (day, m) => void (day[m] = ABSENT),
  sampleAt: (day, m, start_time) => ({ start_time, value: day[m]! / scale }),
});

/** A minute holds data when its avg is not 0 (a heart rate never is). */
const heartRateMinutes: DayEdits<HeartRateMinutes, HeartRateMinute> = {
  unpack: unpackHeartRateMinutes,
  empty: emptyHeartRateDay,
  copy: (day) => ({ avg: day.avg.slice(), min: day.min.slice(), max: day.max.slice() }),
  same: (a, b) => Buffer.compare(a.avg, b.avg) === 0 && Buffer.compare(a.min, b.min) === 0 && Buffer.compare(a.max, b.max) === 0,
  isEmpty: (day) => minutesWithData(day) === 0,
  pack: (day) => packHeartRateDay(day, lowestHalfHour),
  holds: (day, m) => day.avg[m] !== 0,
  put: (day, m, { avg, min, max }) => void ((day.avg[m] = avg), (day.min[m] = min), (day.max[m] = max)),
  clear: (day, m) => void (day.avg[m] = day.min[m] = day.max[m] = 0),
  sampleAt: (day, m, start_time) => ({ start_time, avg: day.avg[m]!, min: day.min[m]!, max: day.max[m]! }),
};

/** Each codec's edits, made for a metric's scale. */
const EDITS_OF_CODEC: { readonly [C in keyof SampleOfCodec]: (scale: number) => DayEdits<unknown, SampleOfCodec[C]> } = {
  'minute-values': minuteValues,
  'heart-rate-minutes': () => heartRateMinutes,
};

/** The edits of `metric`'s days, by its codec and scale. */
export function dayEditsOf<M extends SeriesMetric>(metric: M): DayEdits<unknown, SampleOf<M>> {
  const { codec, scale } = SERIES_METRICS[metric];
  return EDITS_OF_CODEC[codec](scale) as DayEdits<unknown, SampleOf<M>>;
}
