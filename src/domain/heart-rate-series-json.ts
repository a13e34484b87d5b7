/**
 * The 200 body of `GET /v1/users/me/heartrate/` written as JSON straight from the store's bucket
 * arrays: a day by minute is 1,440 buckets and about 126 KB, and building an object per bucket and
 * then a string of them (the route schema's generated serializer) cost about ten times sending the
 * bytes (docs/performance.md, "The rows of issue 30"). The text is the one that serializer wrote for
 * the same series — the schema's key order, numbers as JavaScript prints them — and the schema
 * (HEART_RATE_SERIES_JSON_SCHEMA) still describes it in the OpenAPI.
 *
 * Most of a bucket's text is its two instants, which depend only on the plan: they are written once
 * per kept plan (./kept-plans.ts) and reused, and the numbers a bucket adds come from
 * tables, not from number-to-text conversions.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import type { HeartRateBuckets } from '../store/heart-rate-series.js';
import type { SeriesRequest } from './step-series.js';

/** Numbers below this print from the tables: heart rates, minutes of a bucket, avgs in tenths. */
const TABLE_SIZE = 4096;
const INTEGER_TEXT = Array.from({ length: TABLE_SIZE }, (_, n) => String(n));
/** `String(tenths / 10)`: the text of `Math.round(avg * 10) / 10`, as the serializer printed it. */
const TENTHS_TEXT = Array.from({ length: TABLE_SIZE }, (_, tenths) => String(tenths / 10));

const integerText = (n: number) => (n < TABLE_SIZE ? INTEGER_TEXT[n]! : String(n));

/** A number or null as the serializer of a `['number', 'null']` schema writes it. */
const nullableNumberText = (value: number | null) => (value === null || !Number.isFinite(value) ? 'null' : String(value));

const ASCII = /^[\x00-\x7f]*$/;

const EMPTY_BUCKET_REST = ',"avg":null,"min":null,"max":null,"minutes":0';

/**
 * `{"start_time":…,"end_time":…` of each bucket of a kept plan, a comma before all but the first.
 * Keyed by the plan's boundaries, which a kept plan never changes; an entry goes with its plan.
 */
const bucketStarts = new WeakMap<readonly number[], readonly string[]>();

function startsOf(boundaries: readonly number[]): readonly string[] {
  let starts = bucketStarts.get(boundaries);
  if (starts === undefined) {
    const count = Math.max(0, boundaries.length - 1);
    const texts = new Array<string>(count);
    for (let i = 0; i < count; i++) texts[i] = `${i === 0 ? '' : ','}{"start_time":${boundaries[i]},"end_time":${boundaries[i + 1]}`;
    starts = texts;
    bucketStarts.set(boundaries, starts);
  }
  return starts;
}

/** The series of `plan` as the JSON bytes of its 200 answer. */
export function heartRateSeriesJson(request: SeriesRequest, plan: BucketPlan, buckets: HeartRateBuckets): Buffer {
  const { boundaries } = plan;
  const starts = startsOf(boundaries);
  const { minutes, sums, min, max, resting } = buckets;
  const head = `{"granularity":${JSON.stringify(request.granularity)},"timezone":${JSON.stringify(request.timezone)},"start_time":${boundaries[0] ?? request.start},"end_time":${boundaries[boundaries.length - 1] ?? request.end},"heartrate":[`;
  let text = head;
  // Day buckets carry a resting heart rate; the others close right after their minutes.
  const ends = resting ? (i: number) => ',"resting":' + nullableNumberText(resting[i] ?? null) + '}' : () => '}';
  for (let i = 0; i < starts.length; i++) {
    const n = minutes[i]!;
    if (n === 0) {
      text += starts[i]! + EMPTY_BUCKET_REST + ends(i);
    } else {
      const tenths = Math.round((sums[i]! / n) * 10);
      const avg = tenths >= 0 && tenths < TABLE_SIZE ? TENTHS_TEXT[tenths]! : String(tenths / 10);
      text += starts[i]! + ',"avg":' + avg + ',"min":' + integerText(min[i]!) + ',"max":' + integerText(max[i]!) + ',"minutes":' + integerText(n) + ends(i);
    }
  }
  // Buckets are ASCII; a zone name could in principle not be, and latin1 would then mangle it.
  return Buffer.from(text + ']}', ASCII.test(head) ? 'latin1' : 'utf8');
}
