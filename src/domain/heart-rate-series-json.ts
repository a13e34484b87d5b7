/**
 * The 200 body of `GET /v1/users/me/heartrate/` written as JSON bytes straight from the store's
 * bucket arrays: a day by minute is 1,440 buckets and about 126 KB, and building an object per
 * bucket and then a string of them (the route schema's generated serializer) cost about ten times
 * sending the bytes (docs/performance.md, "The rows of issue 30"). The bytes are the ones that
 * serializer wrote for the same series — the schema's key order, numbers as JavaScript prints
 * them — and the schema (HEART_RATE_SERIES_JSON_SCHEMA) still describes them in the OpenAPI.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import type { HeartRateBuckets } from '../store/heart-rate-series.js';
import type { SeriesRequest } from './step-series.js';

/** The longest bucket: `{"start_time":…,"end_time":…,"avg":…,"min":…,"max":…,"minutes":…,"resting":…},` with room to spare. */
const MAX_BUCKET_BYTES = 256;

/** Grown on demand and reused: each answer is copied out of it into a buffer of its own size. */
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

const ascii = (text: string) => Buffer.from(text, 'latin1');
const START = ascii('{"start_time":');
const END = ascii(',"end_time":');
const AVG = ascii(',"avg":');
const MIN = ascii(',"min":');
const MAX = ascii(',"max":');
const MINUTES = ascii(',"minutes":');
const RESTING = ascii(',"resting":');
const NULL = ascii('null');

function put(target: Buffer, at: number, bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) target[at + i] = bytes[i]!;
  return at + bytes.length;
}

/** A safe integer in decimal, as `String(n)` writes it. */
function putInteger(target: Buffer, at: number, n: number): number {
  if (n < 0) {
    target[at++] = 0x2d;
    n = -n;
  }
  if (n < 10) {
    target[at] = 0x30 + n;
    return at + 1;
  }
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  const end = at + digits;
  for (let i = end - 1; i >= at; i--) {
    const next = Math.floor(n / 10);
    target[i] = 0x30 + (n - next * 10);
    n = next;
  }
  return end;
}

/**
 * `Math.round(value * 10) / 10` as `String()` writes it, for 0 <= value: the shortest decimal of
 * tenths/10 is its one-decimal form (the nearest double to it), or the integer when there is no tenth.
 */
function putOneDecimal(target: Buffer, at: number, value: number): number {
  const tenths = Math.round(value * 10);
  const whole = Math.floor(tenths / 10);
  const tenth = tenths - whole * 10;
  at = putInteger(target, at, whole);
  if (tenth === 0) return at;
  target[at] = 0x2e;
  target[at + 1] = 0x30 + tenth;
  return at + 2;
}

/** A number or null as the serializer of a `['number', 'null']` schema writes it. */
function putNullableNumber(target: Buffer, at: number, value: number | null): number {
  if (value === null || !Number.isFinite(value)) return put(target, at, NULL);
  if (Number.isSafeInteger(value)) return putInteger(target, at, value);
  return at + target.write(String(value), at, 'latin1');
}

/** The series of `plan` as the JSON bytes of its 200 answer. */
export function heartRateSeriesJson(request: SeriesRequest, plan: BucketPlan, buckets: HeartRateBuckets): Buffer {
  const { boundaries } = plan;
  const count = Math.max(0, boundaries.length - 1);
  const head = `{"granularity":${JSON.stringify(request.granularity)},"timezone":${JSON.stringify(request.timezone)},"start_time":${boundaries[0] ?? request.start},"end_time":${boundaries[boundaries.length - 1] ?? request.end},"heartrate":[`;
  const size = Buffer.byteLength(head) + count * MAX_BUCKET_BYTES + 2;
  if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.max(size, scratch.length * 2));
  const out = scratch;
  let at = out.write(head, 0);
  const { minutes, sums, min, max, resting } = buckets;
  for (let i = 0; i < count; i++) {
    if (i > 0) out[at++] = 0x2c;
    at = put(out, at, START);
    at = putInteger(out, at, boundaries[i]!);
    at = put(out, at, END);
    at = putInteger(out, at, boundaries[i + 1]!);
    const n = minutes[i]!;
    if (n === 0) {
      at = put(out, at, AVG);
      at = put(out, at, NULL);
      at = put(out, at, MIN);
      at = put(out, at, NULL);
      at = put(out, at, MAX);
      at = put(out, at, NULL);
    } else {
      at = put(out, at, AVG);
      at = putOneDecimal(out, at, sums[i]! / n);
      at = put(out, at, MIN);
      at = putInteger(out, at, min[i]!);
      at = put(out, at, MAX);
      at = putInteger(out, at, max[i]!);
    }
    at = put(out, at, MINUTES);
    at = putInteger(out, at, n);
    if (resting) {
      at = put(out, at, RESTING);
      at = putNullableNumber(out, at, resting[i] ?? null);
    }
    out[at++] = 0x7d;
  }
  out[at++] = 0x5d;
  out[at++] = 0x7d;
  const body = Buffer.allocUnsafeSlow(at);
  out.copy(body, 0, 0, at);
  return body;
}
