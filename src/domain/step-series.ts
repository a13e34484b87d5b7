/**
 * The time series of the sum metrics of docs/api.md (steps, distance, calories): the query's schema
 * and what a schema cannot check of it, and assembling the dense series from the sums the store
 * returns for each bucket.
 */
import type { ErrorObject } from 'ajv';
import { invalidRequest } from '../errors.js';
import type { SeriesSums } from '../store/series-sums.js';
import { canonicalTimeZone } from './profile-time-zone.js';
import { keptPlans } from './kept-plans.js';
import { startOfLocalDay, type BucketPlan, type Granularity } from '../calendar/step-buckets.js';

/** The longest range each granularity may ask for (docs/api.md), in seconds. */
export const RANGE_CAP_SECONDS: Readonly<Record<Granularity, number>> = {
  minute: 86_400,
  hour: 31 * 86_400,
  day: 1095 * 86_400,
};

/** 9999-12-31T23:59:59Z: beyond this a timestamp is a mistake, and dates stop being 4-digit. */
export const MAX_TIMESTAMP = 253_402_300_799;

export interface SeriesRequest {
  granularity: Granularity;
  timezone: string;
  start: number;
  end: number;
}

export interface StepBucket {
  start_time: number;
  end_time: number;
  value: number;
}

/** The 200 body of a series read (docs/api.md): the buckets under the metric's name. */
export type SumSeries<Name extends string = string> = {
  granularity: Granularity;
  timezone: string;
  start_time: number;
  end_time: number;
  total: number;
} & Record<Name, StepBucket[]>;

/**
 * The query of a series read (docs/api.md): the schema decides every rule it can say (no other
 * parameter, integers in range, a known granularity); seriesRequestOf the rest.
 */
export const SERIES_QUERY_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start_time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix seconds; default: the start of the user\'s today' },
    end_time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix seconds, after start_time; default: now. At most 1 day (minute), 31 days (hour) or 1095 days (day) after start_time' },
    granularity: { type: 'string', enum: ['minute', 'hour', 'day'], default: 'day' },
    timezone: { type: 'string', description: 'an IANA time zone name; default: the profile\'s' },
  },
} as const;

const QUERY_PARAMETERS = Object.keys(SERIES_QUERY_JSON_SCHEMA.properties);

/**
 * The words of a steps series query its schema refused (docs/api.md, "Steps series"), as the route
 * has said them since its first version (`start_time must be given at most once`).
 */
export function stepSeriesQueryWords(error: ErrorObject): string {
  const name = error.instancePath.slice(1);
  const params = error.params as Record<string, unknown>;
  // What was sent for one parameter, as text or as the number it was read as; not the whole query
  // of an unknown parameter: an object without a prototype whose keys are the client's
  // (`?toString` made String() of it throw).
  const sent = typeof error.data === 'string' || typeof error.data === 'number' ? String(error.data).slice(0, 40) : '';
  if (name === '') return `unknown query parameter "${String(params.additionalProperty).slice(0, 40)}"; expected ${QUERY_PARAMETERS.join(', ')}`;
  if (Array.isArray(error.data)) return `${name} must be given at most once`;
  if (name === 'granularity') return `granularity must be minute, hour or day, got "${sent}"`;
  if (name === 'timezone') return 'timezone must be an IANA time zone name such as Europe/Berlin';
  if (error.keyword === 'maximum') return `${name} must be at most ${MAX_TIMESTAMP} (the end of year 9999)`;
  return `${name} must be a non-negative integer number of Unix seconds, got "${sent}"`;
}

/**
 * The 200 body of a series (docs/api.md): the granularity and zone asked for and the instants its
 * buckets span, then `more` (each required), then the buckets under `name`: each its instants and
 * `bucket`, of which the properties `required` are always there.
 */
export function seriesJsonSchema(name: string, more: Record<string, object>, bucket: Record<string, object>, required: readonly string[]) {
  return {
    type: 'object',
    required: ['granularity', 'timezone', 'start_time', 'end_time', ...Object.keys(more), name],
    additionalProperties: false,
    properties: {
      granularity: { type: 'string' },
      timezone: { type: 'string' },
      start_time: { type: 'integer' },
      end_time: { type: 'integer' },
      ...more,
      [name]: {
        type: 'array',
        items: { type: 'object', required: ['start_time', 'end_time', ...required], additionalProperties: false, properties: { start_time: { type: 'integer' }, end_time: { type: 'integer' }, ...bucket } },
      },
    },
  };
}

/** The 200 body of a series of `name`, whose values are integers or numbers with a decimal. */
export const sumSeriesJsonSchema = (name: string, value: 'integer' | 'number') => seriesJsonSchema(name, { total: { type: value } }, { value: { type: value } }, ['value']);

/** A series query whose shape its schema has checked (SERIES_QUERY_JSON_SCHEMA). */
export interface SeriesQuery {
  granularity?: Granularity;
  timezone?: string;
  start_time?: number | string;
  end_time?: number | string;
}

/**
 * What a schema cannot check of a series query: the zone, the defaults (from the start of the
 * local today to now), the order of the times and the cap of the granularity.
 */
export function seriesRequestOf(query: SeriesQuery, profileZone: string, now: number): SeriesRequest {
  const granularity = query.granularity ?? 'day';
  const timezone = zoneOf(query.timezone, profileZone);
  const end = query.end_time === undefined ? now : Number(query.end_time);
  const start = query.start_time === undefined ? startOfLocalDay(timezone, end) : Number(query.start_time);
  if (end < start) throw invalidRequest(`end_time${query.end_time === undefined ? ' (default: now)' : ''} ${end} is before start_time ${start}`);
  if (end - start > RANGE_CAP_SECONDS[granularity]) {
    const days = RANGE_CAP_SECONDS[granularity] / 86_400;
    throw invalidRequest(`the range from start_time to end_time is longer than ${days} day${days === 1 ? '' : 's'}, the most granularity=${granularity} allows`);
  }
  return { granularity, timezone, start, end };
}

/** The zone asked for, else the profile's, canonical. */
function zoneOf(asked: string | undefined, profileZone: string): string {
  if (asked === undefined) return canonicalTimeZone(profileZone) ?? 'UTC';
  const zone = canonicalTimeZone(asked);
  if (zone === null) throw invalidRequest(`timezone must be an IANA time zone name such as Europe/Berlin, got "${asked.slice(0, 64)}"`);
  return zone;
}

/**
 * `writtenAt`: the user's write position, from the bearer check (store/replica.ts); `strideCm`:
 * the profile's stride length, from the same check (distance).
 */
export type SeriesReader<Name extends string = string> = (
  userId: string,
  request: SeriesRequest,
  writtenAt?: string | null,
  strideCm?: number | null,
) => Promise<SumSeries<Name>>;

export type StepSeriesReader = SeriesReader<'steps'>;

export function createStepSeriesReader(sums: SeriesSums): StepSeriesReader {
  return createSeriesReader(sums, 'steps', 1);
}

/**
 * The series reader of a metric whose buckets are sums: [start, end) widened to whole local
 * buckets, with kept plans, and one read of the store's sums whatever the range. `name` names the
 * buckets in the answer, and the store's sums are `scale` times the values answered (calories:
 * tenths of a kcal), so a value is the bucket's sum, divided once — the total too, from the sum of
 * the stored integers.
 */
export function createSeriesReader<Name extends string>(sums: SeriesSums, name: Name, scale: number): SeriesReader<Name> {
  const planOf = keptPlans();
  return async (userId, request, writtenAt, strideCm) => {
    const plan = planOf(request);
    return seriesOf(request, plan, await sums(userId, plan, writtenAt, strideCm), name, scale);
  };
}

function seriesOf<Name extends string>(request: SeriesRequest, plan: BucketPlan, sums: readonly number[], name: Name, scale: number): SumSeries<Name> {
  const { boundaries } = plan;
  const count = Math.max(0, boundaries.length - 1);
  const buckets: StepBucket[] = new Array(count);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const value = sums[i] ?? 0;
    total += value;
    buckets[i] = { start_time: boundaries[i]!, end_time: boundaries[i + 1]!, value: scale === 1 ? value : value / scale };
  }
  return {
    granularity: request.granularity,
    timezone: request.timezone,
    start_time: boundaries[0] ?? request.start,
    end_time: boundaries[boundaries.length - 1] ?? request.end,
    total: scale === 1 ? total : total / scale,
    [name]: buckets,
  } as SumSeries<Name>;
}
