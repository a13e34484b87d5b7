/**
 * Sending a made-up person's data (src/domain/synthetic-person.ts) to a running Stride through its
 * resource API, as a device's app would: per UTC day, one request per minute metric and one for the
 * heart rate (so each packed day row is written once, and no request passes the caps of
 * docs/api.md, "Steps upload" and "Heart-rate upload"), then each night and each weighing on its
 * own.
 */
import type { PersonData } from '../../src/domain/synthetic-person.js';
import { connection, send } from './browser.js';

/** The write scopes of every kind of data (docs/api.md, the table of scopes). */
export const WRITE_SCOPES = 'write_activity write_heartrate write_sleep write_body';

const DAY = 86_400;

export interface UploadOptions {
  /** Leave the steps out (the bench user's steps are imported with the CLI). */
  withoutSteps?: boolean;
}

export interface Uploaded {
  requests: number;
  /** Minute samples, heart-rate readings, sleep sessions and weighings sent. */
  records: number;
}

/** Groups items by the UTC day of `timeOf`, in order of days. */
export function byUtcDay<T>(items: readonly T[], timeOf: (item: T) => number): T[][] {
  const days = new Map<number, T[]>();
  for (const item of items) {
    const day = Math.floor(timeOf(item) / DAY);
    let list = days.get(day);
    if (!list) days.set(day, (list = []));
    list.push(item);
  }
  return [...days.entries()].sort(([a], [b]) => a - b).map(([, list]) => list);
}

/** Uploads `data` with `token` (every write scope); throws on the first answer that is not 200. */
export async function uploadPerson(origin: string, token: string, data: PersonData, options: UploadOptions = {}): Promise<Uploaded> {
  const client = connection(origin, 60_000);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const result: Uploaded = { requests: 0, records: 0 };
  const post = async (path: string, body: unknown, records: number) => {
    const answer = await send(client, path, { method: 'POST', headers, body: JSON.stringify(body) });
    if (answer.status !== 200) throw new Error(`POST ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
    result.requests++;
    result.records += records;
  };
  try {
    if (!options.withoutSteps) {
      for (const samples of byUtcDay(data.steps, (s) => s.start_time)) await post('/v1/users/me/activities/steps', { samples }, samples.length);
    }
    for (const samples of byUtcDay(data.calories, (s) => s.start_time)) await post('/v1/users/me/activities/calories', { samples }, samples.length);
    for (const samples of byUtcDay(data.heartrate, (r) => r.time)) await post('/v1/users/me/heartrate', { samples }, samples.length);
    for (const session of data.sleep) await post('/v1/users/me/sleep', session, 1);
    for (const weighing of data.weight) await post('/v1/users/me/body/weight', weighing, 1);
    return result;
  } finally {
    await client.destroy();
  }
}
