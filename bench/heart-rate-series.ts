/**
 * Micro-benchmark of heart-rate series on SQLite (docs/api.md): one person with 30 days of 16
 * waking hours of readings every 5 seconds, read through the reader the route calls; median µs of
 * a 30-day daily series (UTC, Europe/Berlin, Asia/Kolkata), a 31-day hourly one and a day by minute,
 * each written every time and sent again from the kept answers (src/domain/heart-rate-answers.ts),
 * and the bytes of their JSON.
 *
 *   npm run build && node dist/bench/heart-rate-series.js
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { minutesOfReadings } from '../src/domain/heart-rate-readings.js';
import { seriesChange } from '../src/domain/minute-samples.js';
import { keptHeartRateAnswers } from '../src/domain/heart-rate-answers.js';
import { createHeartRateSeriesReader, type HeartRateSeriesReader } from '../src/domain/heart-rate-series.js';
import type { SeriesRequest } from '../src/domain/step-series.js';
import { createStores } from '../src/store/stores.js';
import { wakingDayReadings } from './lib/heart-rate-data.js';

const END = Date.UTC(2026, 10, 26) / 1000;
const DAYS = 30;

const dir = mkdtempSync(join(tmpdir(), 'stride-hr-series-'));
const db = openDatabase(`sqlite:${join(dir, 'bench.sqlite')}`);
try {
  await migrateToLatest(db);
  const stores = createStores(db);
  const id = randomUUID();
  await db.kysely.insertInto('users').values({ id, email: `${id}@example.test`, password_hash: 'unused', display_name: 'Bench', created_at: 0, updated_at: 0, stride_length_cm: null }).execute();
  for (let day = 0; day < DAYS + 2; day++) {
    const dayStart = END - (DAYS + 1) * 86_400 + day * 86_400;
    const minutes = minutesOfReadings(wakingDayReadings(dayStart, 5, day));
    await stores.heartRate.upsertSamples(id, minutes, seriesChange(minutes.map((m) => m.start_time), 'UTC', dayStart, 0));
  }
  // Written every time (no answer can be kept in 0 bytes), and sent again from the kept answers.
  const written = createHeartRateSeriesReader(stores.heartRate.readDays, keptHeartRateAnswers(0));
  const kept = createHeartRateSeriesReader(stores.heartRate.readDays);
  const cases: Array<[string, SeriesRequest]> = [
    ['30 days daily, UTC', { granularity: 'day', timezone: 'UTC', start: END - 30 * 86_400, end: END - 1 }],
    ['30 days daily, Europe/Berlin', { granularity: 'day', timezone: 'Europe/Berlin', start: END - 30 * 86_400, end: END - 1 }],
    ['30 days daily, Asia/Kolkata', { granularity: 'day', timezone: 'Asia/Kolkata', start: END - 30 * 86_400, end: END - 1 }],
    ['31 days hourly, Europe/Berlin', { granularity: 'hour', timezone: 'Europe/Berlin', start: END - 31 * 86_400, end: END }],
    ['1 day by minute, UTC', { granularity: 'minute', timezone: 'UTC', start: END - 86_400, end: END }],
  ];
  const median = async (read: HeartRateSeriesReader, request: SeriesRequest) => {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 600; i++) {
      const started = performance.now();
      bytes = (await read(id, request)).length;
      if (i >= 100) times.push((performance.now() - started) * 1000);
    }
    times.sort((a, b) => a - b);
    return { us: times[times.length >> 1]!, bytes };
  };
  console.log('| series | median µs, written | median µs, kept answer | JSON bytes |\n|---|---|---|---|');
  for (const [name, request] of cases) {
    const fresh = await median(written, request);
    const again = await median(kept, request);
    console.log(`| ${name} | ${fresh.us.toFixed(0)} | ${again.us.toFixed(1)} | ${fresh.bytes} |`);
  }
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
