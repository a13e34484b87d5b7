/** Helpers shared by the heart-rate API tests: the requests, and a plain model of what a series must say. */
import assert from 'node:assert/strict';
import { planBuckets, type Granularity } from '../../src/calendar/step-buckets.js';
import type { TestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';

export const HEART_RATE = '/v1/users/me/heartrate';

export interface Reading {
  time: number;
  bpm: number;
}

export interface HeartRateBucket {
  start_time: number;
  end_time: number;
  avg: number | null;
  min: number | null;
  max: number | null;
  minutes: number;
  resting?: number | null;
}

export interface HeartRateSeries {
  granularity: string;
  timezone: string;
  start_time: number;
  end_time: number;
  heartrate: HeartRateBucket[];
}

export async function postReadings(t: TestApp, token: string, samples: Reading[]) {
  const response = await t.app.inject({ method: 'POST', url: `${HEART_RATE}/`, headers: bearer(token), payload: { samples } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as { accepted: number };
}

export async function readHeartRate(t: TestApp, token: string, query: Record<string, string | number>): Promise<HeartRateSeries> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const response = await t.app.inject({ method: 'GET', url: `${HEART_RATE}?${search}`, headers: bearer(token) });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as HeartRateSeries;
}

/** What each stored minute holds, from readings (the last upload of a minute wins). */
export type MinuteModel = Map<number, { avg: number; min: number; max: number }>;

export function applyUpload(model: MinuteModel, readings: readonly Reading[]): void {
  const byMinute = new Map<number, number[]>();
  for (const { time, bpm } of readings) {
    const minute = time - (time % 60);
    byMinute.set(minute, [...(byMinute.get(minute) ?? []), bpm]);
  }
  for (const [minute, values] of byMinute) {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    model.set(minute, { avg: Math.round(mean), min: Math.min(...values), max: Math.max(...values) });
  }
}

const oneDecimal = (value: number) => Math.round(value * 10) / 10;

/** What the model holds for the minutes starting in [from, to), in time order. */
function minutesIn(model: MinuteModel, from: number, to: number): Array<{ avg: number; min: number; max: number }> {
  const inside = [];
  for (let minute = Math.ceil(from / 60) * 60; minute < to; minute += 60) {
    const value = model.get(minute);
    if (value) inside.push(value);
  }
  return inside;
}

/**
 * The series the model says, minute by minute: each bucket from the minutes starting in it, and a
 * day's resting heart rate as docs/api.md defines it — the lowest mean over the half hours that
 * start on a quarter hour and lie in the day, counting those with at least 20 minutes of data.
 */
export function expectedSeries(model: MinuteModel, zone: string, granularity: Granularity, start: number, end: number): HeartRateBucket[] {
  const { boundaries } = planBuckets(zone, granularity, start, end);
  const buckets: HeartRateBucket[] = [];
  for (let i = 0; i + 1 < boundaries.length; i++) {
    const from = boundaries[i]!;
    const to = boundaries[i + 1]!;
    const inside = minutesIn(model, from, to);
    const bucket: HeartRateBucket = {
      start_time: from,
      end_time: to,
      avg: inside.length === 0 ? null : oneDecimal(inside.reduce((sum, m) => sum + m.avg, 0) / inside.length),
      min: inside.length === 0 ? null : Math.min(...inside.map((m) => m.min)),
      max: inside.length === 0 ? null : Math.max(...inside.map((m) => m.max)),
      minutes: inside.length,
    };
    if (granularity === 'day') {
      let resting: number | null = null;
      for (let s = Math.ceil(from / 900) * 900; s + 1800 <= to; s += 900) {
        const half = minutesIn(model, s, s + 1800).map((value) => value.avg);
        if (half.length < 20) continue;
        const mean = half.reduce((a, b) => a + b, 0) / half.length;
        if (resting === null || mean < resting) resting = mean;
      }
      bucket.resting = resting === null ? null : oneDecimal(resting);
    }
    buckets.push(bucket);
  }
  return buckets;
}

/** Unix seconds of a UTC date and time (month 1–12). */
export const utc = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0) =>
  Date.UTC(year, month - 1, day, hour, minute, second) / 1000;
