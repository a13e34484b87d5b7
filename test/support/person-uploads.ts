/**
 * A person with data of every kind, uploaded through the API as an app would send it (a few days of
 * the synthetic office worker, and distance for some of their minutes), and what an export of them
 * must hold: the test's own model of each kind, not the code under test.
 */
import assert from 'node:assert/strict';
import { OFFICE_WORKER, synthesizePerson } from '../../src/domain/synthetic-person.js';
import type { TestApp } from './app.js';
import { bearer } from './tokens.js';

export interface Minute {
  start_time: number;
  value: number;
}
export interface HeartRateMinute {
  start_time: number;
  avg: number;
  min: number;
  max: number;
}
export interface SleepRecord {
  start_time: number;
  end_time: number;
  stages: Array<{ stage: string; start_time: number; end_time: number }>;
}
export interface WeightRecord {
  time: number;
  kg: number;
  fat_percent: number | null;
}

/** The data sections of an export (docs/web.md, "Your data"). */
export interface ExportedData {
  steps: Minute[];
  distance: Minute[];
  calories: Minute[];
  heartrate: HeartRateMinute[];
  sleep: SleepRecord[];
  weight: WeightRecord[];
}

export const DATA_SECTIONS = ['steps', 'distance', 'calories', 'heartrate', 'sleep', 'weight'] as const;

async function post(t: TestApp, token: string, path: string, payload: object): Promise<void> {
  const response = await t.app.inject({ method: 'POST', url: path, headers: bearer(token), payload });
  assert.equal(response.statusCode, 200, `${path}: ${response.body}`);
}

/**
 * Uploads `days` days of the office worker ending now, through the API with `token` (every write
 * scope), and returns what the person's export must then hold.
 */
export async function uploadEveryKind(t: TestApp, token: string, days = 3, seed = 7): Promise<ExportedData> {
  const person = synthesizePerson(OFFICE_WORKER, t.clock(), days, seed);
  const distance = person.steps.filter((_, i) => i % 3 === 0).map((s) => ({ start_time: s.start_time, value: Math.min(2000, Math.round(s.value * 0.75)) }));
  const minutes: Array<[string, Minute[]]> = [['steps', person.steps], ['distance', distance], ['calories', person.calories]];
  for (const [metric, samples] of minutes) {
    for (let i = 0; i < samples.length; i += 10_080) await post(t, token, `/v1/users/me/activities/${metric}/`, { samples: samples.slice(i, i + 10_080) });
  }
  await post(t, token, '/v1/users/me/heartrate/', { samples: person.heartrate });
  for (const session of person.sleep) await post(t, token, '/v1/users/me/sleep/', session);
  for (const weight of person.weight) await post(t, token, '/v1/users/me/body/weight/', weight);

  const byStart = <T extends { start_time: number }>(list: T[]) => [...list].sort((a, b) => a.start_time - b.start_time);
  const heartrate = new Map<number, number[]>();
  for (const { time, bpm } of person.heartrate) {
    const minute = time - (time % 60);
    heartrate.set(minute, [...(heartrate.get(minute) ?? []), bpm]);
  }
  return {
    steps: byStart(person.steps),
    distance: byStart(distance),
    calories: byStart(person.calories),
    heartrate: [...heartrate]
      .sort(([a], [b]) => a - b)
      .map(([start_time, bpms]) => ({ start_time, avg: Math.round(bpms.reduce((a, b) => a + b, 0) / bpms.length), min: Math.min(...bpms), max: Math.max(...bpms) })),
    sleep: byStart(person.sleep),
    weight: [...person.weight].sort((a, b) => a.time - b.time).map(({ time, kg, fat_percent }) => ({ time, kg, fat_percent })),
  };
}

/** The data sections of an export body. */
export function dataOf(exported: Record<string, unknown>): ExportedData {
  return Object.fromEntries(DATA_SECTIONS.map((kind) => [kind, exported[kind]])) as unknown as ExportedData;
}
