/**
 * The capacity run's load at one rate: devices syncing (each sync a person's next quarter-hour,
 * uploads sent together), each person's app reading the daily summary of the day just synced, and
 * the app reading its event feed — paced to a target of uploads a second, open loop: a sync due
 * while `maxInFlight` requests are out is not sent, so a server that cannot keep up shows as a
 * rate below the target, not as a queue in the driver.
 */
import { Pool } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { send } from '../lib/browser.js';
import type { SimulatedPerson, Upload } from './people.js';

export interface LoadTarget {
  /** Where person i's device sends: origins[i % origins.length]; its app reads from the next one. */
  origins: string[];
  people: SimulatedPerson[];
  /** HTTP Basic credentials of the app, for the feed. */
  appCredentials: string;
  /** Feed reads a second (the app following its cursor). */
  feedPerSecond: number;
  maxInFlight: number;
}

export interface Latencies {
  count: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface StepResult {
  targetUploadsPerSecond: number;
  seconds: number;
  uploads: Latencies;
  reads: Latencies;
  /** Syncs not sent because too many requests were out (the servers behind). */
  syncsSkipped: number;
  errors: number;
  /** The first few failures: status and the start of the answer. */
  errorSamples: string[];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summarize(samples: number[], seconds: number): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 10) / 10;
  return { count: sorted.length, perSecond: round(sorted.length / seconds), p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)) };
}

export async function runStep(target: LoadTarget, uploadsPerSecond: number, seconds: number): Promise<StepResult> {
  const pools = new Map(target.origins.map((origin) => [origin, new Pool(origin, { connections: 64, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })]));
  const uploadMs: number[] = [];
  const readMs: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let inFlight = 0;
  let skipped = 0;
  const busy = new Set<number>();
  const feedCursors = new Map<string, string | null>();

  const timed = async (origin: string, path: string, method: 'GET' | 'POST', headers: Record<string, string>, body: string | undefined, into: number[]) => {
    inFlight++;
    const began = performance.now();
    try {
      const answer = await send(pools.get(origin)!, path, { method, headers, ...(body !== undefined && { body }) });
      into.push(performance.now() - began);
      if (answer.status !== 200) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(`${method} ${path.split('?')[0]}: ${answer.status} ${answer.body.slice(0, 200)}`);
      }
      return answer;
    } catch (error) {
      errors++;
      if (errorSamples.length < 5) errorSamples.push(`${method} ${path.split('?')[0]}: ${(error as Error).message}`);
      return null;
    } finally {
      inFlight--;
    }
  };

  const sync = async (person: SimulatedPerson, date: string, uploads: Upload[]) => {
    busy.add(person.index);
    try {
      const origin = target.origins[person.index % target.origins.length]!;
      const reader = target.origins[(person.index + 1) % target.origins.length]!;
      const headers = { authorization: `Bearer ${person.token}`, 'content-type': 'application/json' };
      await Promise.all(uploads.map((upload) => timed(origin, upload.path, 'POST', headers, upload.body, uploadMs)));
      await timed(reader, `/v1/users/me/summary/daily/?start_date=${date}&end_date=${date}`, 'GET', { authorization: `Bearer ${person.token}` }, undefined, readMs);
    } finally {
      busy.delete(person.index);
    }
  };

  const readFeed = async (origin: string) => {
    const cursor = feedCursors.get(origin) ?? null;
    const path = `/v1/events?limit=100${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
    const answer = await timed(origin, path, 'GET', { authorization: `Basic ${target.appCredentials}` }, undefined, readMs);
    if (answer?.status === 200) {
      const page = JSON.parse(answer.body) as { next_cursor?: string | null };
      if (page.next_cursor) feedCursors.set(origin, page.next_cursor);
    }
  };

  const started = performance.now();
  const pending = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };
  let uploadsDue = 0;
  let feedsDue = 0;
  let next = 0;
  for (;;) {
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed >= seconds) break;
    // Syncs until the uploads sent catch up with the rate (a quiet quarter-hour sends less).
    for (let started = 0; uploadsDue < elapsed * uploadsPerSecond && started < target.people.length; started++) {
      // The next person not still sending their last sync; none free or too much out: skipped.
      let person: SimulatedPerson | undefined;
      for (let tries = 0; tries < target.people.length && !person; tries++) {
        const candidate = target.people[next++ % target.people.length]!;
        if (!busy.has(candidate.index)) person = candidate;
      }
      if (!person || inFlight >= target.maxInFlight) {
        skipped++;
        uploadsDue += 3;
        continue;
      }
      const date = person.date;
      const uploads = person.nextSync();
      uploadsDue += uploads.length;
      track(sync(person, date, uploads));
    }
    while (feedsDue < elapsed * target.feedPerSecond) {
      feedsDue++;
      track(readFeed(target.origins[feedsDue % target.origins.length]!));
    }
    await sleep(5);
  }
  await Promise.all(pending);
  const took = (performance.now() - started) / 1000;
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  return {
    targetUploadsPerSecond: uploadsPerSecond,
    seconds: Math.round(took * 10) / 10,
    uploads: summarize(uploadMs, took),
    reads: summarize(readMs, took),
    syncsSkipped: skipped,
    errors,
    errorSamples,
  };
}
