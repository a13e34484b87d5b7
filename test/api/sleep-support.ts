/** Helpers shared by the sleep and body weight API tests. */
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { TestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';
import { eventRows } from '../support/events.js';

export const SLEEP = '/v1/users/me/sleep';
export const WEIGHT = '/v1/users/me/body/weight';

export type StageName = 'awake' | 'light' | 'deep' | 'rem';

export interface Stage {
  stage: StageName;
  start_time: number;
  end_time: number;
}

export interface SessionBody {
  start_time: number;
  end_time: number;
  stages: Stage[];
}

export interface Session extends SessionBody {
  id: string;
  date: string;
  minutes_asleep: number;
  minutes_awake: number;
}

/** A session from `start` made of stages of the given kinds and lengths in minutes. */
export function night(start: number, parts: Array<[StageName, number]>): SessionBody {
  const stages: Stage[] = [];
  let time = start;
  for (const [stage, minutes] of parts) {
    stages.push({ stage, start_time: time, end_time: time + minutes * 60 });
    time += minutes * 60;
  }
  return { start_time: start, end_time: time, stages };
}

export async function postSession(t: TestApp, token: string, body: SessionBody): Promise<Session> {
  const response = await t.app.inject({ method: 'POST', url: `${SLEEP}/`, headers: bearer(token), payload: body as unknown as object });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as Session;
}

export async function readSleep(t: TestApp, token: string, query: Record<string, string> = {}): Promise<{ timezone: string; sleep: Session[] }> {
  const response = await t.app.inject({ method: 'GET', url: `${SLEEP}/?${new URLSearchParams(query)}`, headers: bearer(token) });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as { timezone: string; sleep: Session[] };
}

/** The data events an app got about a user, oldest first. */
export async function eventsOf(db: Kysely<Database>, appId: string, type: string): Promise<Array<Record<string, unknown>>> {
  const rows = await eventRows(db, { appId, type });
  return rows.map((row) => JSON.parse(row.data) as Record<string, unknown>);
}
