/** Helpers shared by the tests of the sum metrics (steps, distance, calories) through the API. */
import assert from 'node:assert/strict';
import { planBuckets, type Granularity } from '../../src/calendar/step-buckets.js';
import type { TestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';

export type Metric = 'steps' | 'distance' | 'calories';

export const pathOf = (metric: Metric) => `/v1/users/me/activities/${metric}`;

export interface Bucket {
  start_time: number;
  end_time: number;
  value: number;
}

export interface MetricSeries {
  granularity: string;
  timezone: string;
  start_time: number;
  end_time: number;
  total: number;
  buckets: Bucket[];
}

export async function upload(t: TestApp, token: string, metric: Metric, samples: Array<{ start_time: number; value: number }>) {
  const response = await t.app.inject({ method: 'POST', url: `${pathOf(metric)}/`, headers: bearer(token), payload: { samples } });
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(response.json(), { accepted: samples.length });
}

export async function readMetric(t: TestApp, token: string, metric: Metric, query: Record<string, string | number>): Promise<MetricSeries> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const response = await t.app.inject({ method: 'GET', url: `${pathOf(metric)}?${search}`, headers: bearer(token) });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as Record<string, unknown>;
  const buckets = body[metric] as Bucket[];
  assert.deepEqual(Object.keys(body).sort(), ['end_time', 'granularity', metric, 'start_time', 'timezone', 'total'].sort());
  let previousEnd = body.start_time as number;
  let tenths = 0;
  for (const bucket of buckets) {
    assert.equal(typeof bucket.value, 'number');
    assert.equal(bucket.start_time, previousEnd, 'buckets are contiguous');
    previousEnd = bucket.end_time;
    assert.equal(Math.round(bucket.value * 10) / 10, bucket.value, 'at most one decimal');
    tenths += Math.round(bucket.value * 10);
  }
  assert.equal(previousEnd, body.end_time);
  assert.equal(body.total, tenths / 10, 'the total is the sum of the buckets');
  return { ...(body as unknown as Omit<MetricSeries, 'buckets'>), buckets };
}

export async function removeRange(t: TestApp, token: string, metric: Metric, start: number, end: number, slash = '') {
  return t.app.inject({ method: 'DELETE', url: `${pathOf(metric)}${slash}?start_time=${start}&end_time=${end}`, headers: bearer(token) });
}

/**
 * The expected value of each bucket of the series of [start, end) in `zone`: the sum of the values
 * of `minutes` (minute start → value, in tenths when `scale` is 10) that start in it, over `scale`.
 */
export function expectedBuckets(minutes: ReadonlyMap<number, number>, zone: string, granularity: Granularity, start: number, end: number, scale = 1): Bucket[] {
  const { boundaries } = planBuckets(zone, granularity, start, end);
  const buckets: Bucket[] = [];
  for (let i = 0; i + 1 < boundaries.length; i++) {
    let sum = 0;
    for (const [minute, value] of minutes) if (minute >= boundaries[i]! && minute < boundaries[i + 1]!) sum += value;
    buckets.push({ start_time: boundaries[i]!, end_time: boundaries[i + 1]!, value: sum / scale });
  }
  return buckets;
}
