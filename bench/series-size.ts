/**
 * Bytes per person-day of minute steps, and the upload rate of one day per request: PERSONS people
 * with 30 days of a minute count every minute, uploaded through the store (`steps.upsertSamples`,
 * what POST /v1/users/me/activities/steps calls), a day per call. SQLite: growth of the file after
 * a checkpoint; PostgreSQL: pg_total_relation_size of the step tables (with their indexes and TOAST).
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

async function load(db: Db): Promise<number> {
  const { steps } = createStores(db);
  let samples = 0;
  let seconds = 0;
  for (let person = 0; person < PERSONS; person++) {
    const id = randomUUID();
    await db.kysely.insertInto('users').values({
      id, email: `size-${id}@example.test`, password_hash: 'unused', display_name: 'Size', created_at: 0, updated_at: 0, stride_length_cm: null,
    }).execute();
    for (let day = 0; day < DAYS; day++) {
      const batch: StepSample[] = Array.from({ length: 1440 }, (_, m) => {
        const start_time = FIRST_DAY + day * 86_400 + m * 60;
        return { start_time, value: minuteValue(person, start_time) };
      });
      const started = performance.now();
      await steps.upsertSamples(id, batch, stepsChange(batch, 'UTC', FIRST_DAY + DAYS * 86_400, 0));
      seconds += (performance.now() - started) / 1000;
      samples += batch.length;
    }
  }
  return samples / seconds;
}

async function sqliteSize(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'stride-size-'));
  const path = join(dir, 'size.sqlite');
  const db = openDatabase(`sqlite:${path}`);
  try {
    await migrateToLatest(db);
    db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const empty = statSync(path).size;
    const rate = await load(db);
    db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const grown = statSync(path).size - empty;
    console.log(`sqlite: ${(grown / (PERSONS * DAYS)).toFixed(0)} bytes per person-day; upload ${rate.toFixed(0)} samples/s (a day per call)`);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresSize(url: string): Promise<void> {
  const schema = `size_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const db = openDatabase(url, { schema });
  try {
    await migrateToLatest(db);
    const rate = await load(db);
    await admin.query(`set search_path = ${schema}`);
    const tables = ['step_samples', 'step_rollups', 'series_days'];
    const { rows } = await admin.query<{ bytes: string }>(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0) as bytes from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and c.relname = any($2) and c.relkind = 'r'`, [schema, tables]);
    console.log(`postgres: ${(Number(rows[0]!.bytes) / (PERSONS * DAYS)).toFixed(0)} bytes per person-day; upload ${rate.toFixed(0)} samples/s (a day per call)`);
  } finally {
    await db.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

await sqliteSize();
if (process.argv[2]) await postgresSize(process.argv[2]);
