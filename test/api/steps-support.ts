/** Helpers shared by the steps API tests. */
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';

export const STEPS = '/v1/users/me/activities/steps';

/** Unix seconds of a UTC date and time (month 1–12). */
export const utc = (year: number, month: number, day: number, hour = 0, minute = 0) =>
  Date.UTC(year, month - 1, day, hour, minute) / 1000;

export interface Bucket {
  start_time: number;
  end_time: number;
  value: number;
}

export interface Series {
  granularity: string;
  timezone: string;
  start_time: number;
  end_time: number;
  total: number;
  steps: Bucket[];
}

export async function postSamples(t: TestApp, token: string, samples: Array<{ start_time: number; value: number }>) {
  const response = await t.app.inject({ method: 'POST', url: STEPS, headers: bearer(token), payload: { samples } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as { accepted: number };
}

export async function readSeries(t: TestApp, token: string, query: Record<string, string | number>): Promise<Series> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const response = await t.app.inject({ method: 'GET', url: `${STEPS}?${search}`, headers: bearer(token) });
  assert.equal(response.statusCode, 200, response.body);
  const series = response.json() as Series;
  assertWellFormed(series);
  return series;
}

/** Dense, contiguous, numeric, with a total equal to the sum of the buckets. */
export function assertWellFormed(series: Series): void {
  let previousEnd = series.start_time;
  let sum = 0;
  for (const bucket of series.steps) {
    assert.equal(typeof bucket.value, 'number');
    assert.equal(bucket.start_time, previousEnd, 'buckets are contiguous');
    assert.ok(bucket.end_time > bucket.start_time);
    previousEnd = bucket.end_time;
    sum += bucket.value;
  }
  assert.equal(previousEnd, series.end_time);
  assert.equal(series.total, sum);
}

export const lengths = (series: Series) => series.steps.map((b) => b.end_time - b.start_time);
