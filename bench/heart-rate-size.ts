/**
 * Bytes per person-day of heart rate in the series store, alone and beside minute steps: PERSONS
 * people × DAYS days of 16 waking hours (07:00–23:00 UTC) of readings every 5 seconds, written
 * through `heartRate.upsertSamples` (what POST /v1/users/me/heartrate calls) a day per call, and,
 * for the second figure, steps for the same waking minutes. SQLite: growth of the file after a
 * checkpoint; PostgreSQL: pg_total_relation_size of series_days (indexes and TOAST included).
 *
 *   npm run build && node dist/bench/heart-rate-size.js [postgres://…]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { minutesOfReadings } from '../src/domain/heart-rate-readings.js';
import { seriesChange } from '../src/domain/minute-samples.js';
import { stepsChange, type StepSample } from '../src/domain/step-samples.js';
import { createStores } from '../src/store/stores.js';
import { random, wakingDayReadings } from './lib/heart-rate-data.js';

const PERSONS = 5;
const DAYS = 30;
const FIRST_DAY = Date.UTC(2026, 9, 1) / 1000;

async function load(db: Db, withSteps: boolean): Promise<void> {
  const stores = createStores(db);
  for (let person = 0; person < PERSONS; person++) {
    const id = randomUUID();
    await db.kysely.insertInto('users').values({
      id, email: `size-${id}@example.test`, password_hash: 'unused', display_name: 'Size', created_at: 0, updated_at: 0, stride_length_cm: null,
    }).execute();
    for (let day = 0; day < DAYS; day++) {
      const dayStart = FIRST_DAY + day * 86_400;
      const minutes = minutesOfReadings(wakingDayReadings(dayStart, 5, person * 1000 + day));
      await stores.heartRate.upsertSamples(id, minutes, seriesChange(minutes.map((m) => m.start_time), 'UTC', dayStart, 0));
      if (!withSteps) continue;
      const next = random(person * 7 + day);
      const steps: StepSample[] = minutes.map((m) => ({ start_time: m.start_time, value: next() < 0.6 ? Math.floor(next() * 20) : Math.floor(next() * 140) }));
      await stores.steps.upsertSamples(id, steps, stepsChange(steps, 'UTC', dayStart, 0));
    }
  }
}

async function sqliteSize(withSteps: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'stride-size-'));
  const path = join(dir, 'size.sqlite');
  const db = openDatabase(`sqlite:${path}`);
  try {
    await migrateToLatest(db);
    db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const empty = statSync(path).size;
    await load(db, withSteps);
    db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    return (statSync(path).size - empty) / (PERSONS * DAYS);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresSize(url: string, withSteps: boolean): Promise<number> {
  const schema = `size_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const db = openDatabase(url, { schema });
  try {
    await migrateToLatest(db);
    const before = await admin.query<{ bytes: string }>(`select sum(pg_total_relation_size(relid)) as bytes from pg_partition_tree($1::regclass)`, [`${schema}.series_days`]);
    await load(db, withSteps);
    await admin.query(`vacuum ${schema}.series_days`);
    const after = await admin.query<{ bytes: string }>(`select sum(pg_total_relation_size(relid)) as bytes from pg_partition_tree($1::regclass)`, [`${schema}.series_days`]);
    return (Number(after.rows[0]!.bytes) - Number(before.rows[0]!.bytes)) / (PERSONS * DAYS);
  } finally {
    await db.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

for (const withSteps of [false, true]) {
  const what = withSteps ? 'heart rate + steps' : 'heart rate alone';
  console.log(`sqlite, ${what}: ${(await sqliteSize(withSteps)).toFixed(0)} bytes per person-day`);
  if (process.argv[2]) console.log(`postgres, ${what}: ${(await postgresSize(process.argv[2], withSteps)).toFixed(0)} bytes per person-day`);
}
