/**
 * Bytes per person-day in the series store, and the upload rate of one day per request: PERSONS
 * people with 30 days of data, uploaded through the stores (what POST …/steps and …/calories call),
 * a day per call. Two kinds of day:
 * - `steps noise`: a minute count every minute of the day, values mostly under 140 and without
 *   pattern (the bench of decision 0013: the worst case for compression);
 * - `waking`: steps and calories every minute of 16 waking hours (07:00–23:00), as a wrist device
 *   sends them — quiet minutes of 0 steps and about 1.2 kcal, walks of 80–130 steps a minute — and
 *   the distance rows those steps derive.
 * SQLite: growth of the file after a checkpoint; PostgreSQL: pg_total_relation_size of series_days
 * (with its index and TOAST).
 *
 *   npm run build && node dist/bench/series-size.js [postgres://…]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { stepsChange, type StepSample } from '../src/domain/step-samples.js';
import { createStores } from '../src/store/stores.js';

const PERSONS = 5;
const DAYS = 30;
const FIRST_DAY = Date.UTC(2026, 9, 1) / 1000;

/** A plausible minute count: mostly small, some walking, deterministic. */
function minuteValue(person: number, time: number): number {
  const x = Math.sin(person * 7919 + time / 60) * 10_000;
  const r = x - Math.floor(x);
  return r < 0.6 ? Math.floor(r * 20) : Math.floor(r * 140);
}

/** A deterministic generator of numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface DayOfData {
  steps: StepSample[];
  calories: StepSample[];
}

/** Steps and calories of 16 waking hours: walks of a few minutes to half an hour, rest between. */
export function wakingDay(person: number, dayStart: number): DayOfData {
  const next = random(person * 100_003 + dayStart / 86_400);
  const steps: StepSample[] = [];
  const calories: StepSample[] = [];
  let walking = 0;
  for (let m = 7 * 60; m < 23 * 60; m++) {
    if (walking === 0 && next() < 0.04) walking = 3 + Math.floor(next() * 28);
    const count = walking > 0 ? 80 + Math.floor(next() * 50) : next() < 0.15 ? Math.floor(next() * 30) : 0;
    if (walking > 0) walking--;
    const start_time = dayStart + m * 60;
    steps.push({ start_time, value: count });
    calories.push({ start_time, value: Math.round((1.1 + next() * 0.3 + count * 0.045) * 10) / 10 });
  }
  return { steps, calories };
}

function noiseDay(person: number, dayStart: number): DayOfData {
  const steps = Array.from({ length: 1440 }, (_, m) => {
    const start_time = dayStart + m * 60;
    return { start_time, value: minuteValue(person, start_time) };
  });
  return { steps, calories: [] };
}

const KINDS = { 'steps noise': noiseDay, waking: wakingDay } as const;

async function load(db: Db, dayOf: (person: number, dayStart: number) => DayOfData): Promise<number> {
  const stores = createStores(db);
  let samples = 0;
  let seconds = 0;
  for (let person = 0; person < PERSONS; person++) {
    const id = randomUUID();
    await db.kysely.insertInto('users').values({
      id, email: `size-${id}@example.test`, password_hash: 'unused', display_name: 'Size', created_at: 0, updated_at: 0, stride_length_cm: null,
    }).execute();
    for (let day = 0; day < DAYS; day++) {
      const { steps, calories } = dayOf(person, FIRST_DAY + day * 86_400);
      const started = performance.now();
      await stores.steps.upsertSamples(id, steps, stepsChange(steps, 'UTC', FIRST_DAY + DAYS * 86_400, 0));
      if (calories.length > 0) await stores.calories.upsertSamples(id, calories, stepsChange(calories, 'UTC', FIRST_DAY + DAYS * 86_400, 0));
      seconds += (performance.now() - started) / 1000;
      samples += steps.length + calories.length;
    }
  }
  return samples / seconds;
}

async function sqliteSize(kind: keyof typeof KINDS): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'stride-size-'));
  const path = join(dir, 'size.sqlite');
  const db = openDatabase(`sqlite:${path}`);
  try {
    await migrateToLatest(db);
    db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const empty = statSync(path).size;
    const rate = await load(db, KINDS[kind]);
    db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const grown = statSync(path).size - empty;
    console.log(`sqlite, ${kind}: ${(grown / (PERSONS * DAYS)).toFixed(0)} bytes per person-day; upload ${rate.toFixed(0)} samples/s (a day per call)`);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresSize(url: string, kind: keyof typeof KINDS): Promise<void> {
  const schema = `size_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const db = openDatabase(url, { schema });
  try {
    await migrateToLatest(db);
    const rate = await load(db, KINDS[kind]);
    await admin.query(`set search_path = ${schema}`);
    const { rows } = await admin.query<{ bytes: string }>(
      `select sum(pg_total_relation_size(t.relid)) as bytes from pg_partition_tree(format('%I.series_days', $1::text)::regclass) t`, [schema]);
    console.log(`postgres, ${kind}: ${(Number(rows[0]!.bytes) / (PERSONS * DAYS)).toFixed(0)} bytes per person-day; upload ${rate.toFixed(0)} samples/s (a day per call)`);
  } finally {
    await db.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

if (process.argv[1]?.endsWith('series-size.js')) {
  for (const kind of Object.keys(KINDS) as Array<keyof typeof KINDS>) {
    await sqliteSize(kind);
    if (process.argv[2]) await postgresSize(process.argv[2], kind);
  }
}
