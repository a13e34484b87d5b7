/**
 * What a person holds, read back as an app reads it — through `/v1/…` with a token of every read
 * scope — in the shapes of takeout-archive.ts's `Expected`, over the days an expectation covers.
 * Minute series are read a UTC day at a time (the minute granularity's cap); a sum metric's minute
 * read as 0 is left out (the series is dense, so a stored 0 and no minute read alike), heart rate
 * keeps the minutes with data.
 */
import assert from 'node:assert/strict';
import type { TestApp } from './app.js';
import type { Expected, ExpectedHeartRate, ExpectedMinute, ExpectedSleep, ExpectedWeight } from './takeout-archive.js';
import { bearer } from './tokens.js';

async function get<T>(t: TestApp, token: string, url: string): Promise<T> {
  const response = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json() as T;
}

/** The UTC days (their starts) that the times fall on. */
function utcDays(times: readonly number[]): number[] {
  return [...new Set(times.map((time) => time - (time % 86_400)))].sort((a, b) => a - b);
}

export async function minutesRead(t: TestApp, token: string, metric: 'steps' | 'distance' | 'calories', around: readonly number[]): Promise<ExpectedMinute[]> {
  const found: ExpectedMinute[] = [];
  for (const day of utcDays(around)) {
    const body = await get<Record<string, Array<{ start_time: number; value: number }>>>(t, token, `/v1/users/me/activities/${metric}/?start_time=${day}&end_time=${day + 86_400}&granularity=minute&timezone=UTC`);
    for (const bucket of body[metric]!) if (bucket.value !== 0) found.push({ start_time: bucket.start_time, value: bucket.value });
  }
  return found;
}

export async function heartRateRead(t: TestApp, token: string, around: readonly number[]): Promise<ExpectedHeartRate[]> {
  const found: ExpectedHeartRate[] = [];
  for (const day of utcDays(around)) {
    const body = await get<{ heartrate: Array<{ start_time: number; avg: number; min: number; max: number; minutes: number }> }>(
      t,
      token,
      `/v1/users/me/heartrate/?start_time=${day}&end_time=${day + 86_400}&granularity=minute&timezone=UTC`,
    );
    for (const bucket of body.heartrate) if (bucket.minutes > 0) found.push({ start_time: bucket.start_time, avg: bucket.avg, min: bucket.min, max: bucket.max });
  }
  return found;
}

/** Sessions ending on the dates from `first` to `last` (inclusive, in `zone`). */
export async function sleepRead(t: TestApp, token: string, zone: string, first: string, last: string): Promise<ExpectedSleep[]> {
  const body = await get<{ sleep: ExpectedSleep[] }>(t, token, `/v1/users/me/sleep/?start_date=${first}&end_date=${last}&timezone=${zone}`);
  return body.sleep.map(({ start_time, end_time, stages }) => ({ start_time, end_time, stages }));
}

export async function weightRead(t: TestApp, token: string, zone: string, first: string, last: string): Promise<ExpectedWeight[]> {
  const body = await get<{ weight: ExpectedWeight[] }>(t, token, `/v1/users/me/body/weight/?start_date=${first}&end_date=${last}&timezone=${zone}`);
  return body.weight.map(({ time, kg, fat_percent }) => ({ time, kg, fat_percent }));
}

/** Everything of `expected`'s kinds the person holds over its days, as the API reads it. */
export async function everythingRead(t: TestApp, token: string, expected: Expected, zone: string, dates: readonly string[]): Promise<Omit<Expected, 'readings'>> {
  const around = (list: ReadonlyArray<{ start_time: number }>) => list.map((item) => item.start_time);
  const sleep: ExpectedSleep[] = [];
  const weight: ExpectedWeight[] = [];
  for (const [first, last] of dateRuns(dates)) {
    sleep.push(...(await sleepRead(t, token, zone, first, last)));
    weight.push(...(await weightRead(t, token, zone, first, last)));
  }
  return {
    steps: await minutesRead(t, token, 'steps', around(expected.steps)),
    distance: await minutesRead(t, token, 'distance', around(expected.distance)),
    calories: await minutesRead(t, token, 'calories', around(expected.calories)),
    heartrate: await heartRateRead(t, token, around(expected.heartrate)),
    sleep,
    weight,
  };
}

/** Runs of consecutive dates, at most 100 each (the sleep list's cap), as [first, last]. */
function dateRuns(dates: readonly string[]): Array<[string, string]> {
  const runs: Array<[string, string]> = [];
  let start = 0;
  for (let i = 1; i <= dates.length; i++) {
    const consecutive = i < dates.length && Date.parse(dates[i]!) - Date.parse(dates[i - 1]!) === 86_400_000 && i - start < 100;
    if (!consecutive) {
      runs.push([dates[start]!, dates[i - 1]!]);
      start = i;
    }
  }
  return runs;
}

/** `expected` as the API shows it: minutes of a sum metric that hold 0 left out. */
export function asRead(expected: Expected): Omit<Expected, 'readings'> {
  const nonZero = (list: ExpectedMinute[]) => list.filter((minute) => minute.value !== 0);
  return { steps: nonZero(expected.steps), distance: nonZero(expected.distance), calories: nonZero(expected.calories), heartrate: expected.heartrate, sleep: expected.sleep, weight: expected.weight };
}
