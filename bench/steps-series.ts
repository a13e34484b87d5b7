/**
 * Micro-benchmark of the steps series (docs/api.md) on SQLite: one user with years of minute data,
 * timed through `createStepSeriesReader`, the reader the route calls. Shows the median and p99 of a
 * 365-day daily series (UTC, Europe/Berlin, Asia/Kolkata), a 1095-day one, and that the cost of a
 * 30-day series does not grow with the length of the history.
 *
 *   npx tsc -p tsconfig.json --outDir .build-api && node .build-api/bench/steps-series.js
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase, type Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { MAX_SAMPLES_PER_REQUEST, stepsChange, type StepSample } from '../src/domain/step-samples.js';
import { createStepSeriesReader, type SeriesRequest } from '../src/domain/step-series.js';
import { createStores } from '../src/store/stores.js';

const DAY = 86_400;
const MINUTES_PER_YEAR = 525_600;
/** The history ends here; series read back from it. */
const HISTORY_END = Date.UTC(2025, 0, 1) / 1000;

export interface SeriesTiming {
  name: string;
  buckets: number;
  medianMs: number;
  p99Ms: number;
}

export interface StepsSeriesBenchResult {
  loadSeconds: Record<string, number>;
  timings: SeriesTiming[];
}

/** Deterministic pseudo-random numbers, so every run stores the same history. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** A plausible minute: nothing at night, light activity by day, walks of a few minutes at a time. */
function minuteValue(time: number, next: () => number): number {
  const hour = Math.floor((time % DAY) / 3600);
  if (hour < 6 || hour >= 22) return 0;
  const r = next();
  if (r < 0.08) return 90 + Math.floor(next() * 40);
  if (r < 0.45) return Math.floor(next() * 30);
  return 0;
}

/** Stores `minutes` minutes ending at HISTORY_END through the upload path, a week per batch. */
async function loadHistory(db: Db, userId: string, minutes: number): Promise<number> {
  const { steps } = createStores(db);
  const started = performance.now();
  const next = random(42);
  const first = HISTORY_END - minutes * 60;
  for (let batchStart = 0; batchStart < minutes; batchStart += MAX_SAMPLES_PER_REQUEST) {
    const samples: StepSample[] = [];
    for (let i = batchStart; i < Math.min(batchStart + MAX_SAMPLES_PER_REQUEST, minutes); i++) {
      const time = first + i * 60;
      samples.push({ start_time: time, value: minuteValue(time, next) });
    }
    await steps.upsertSamples(userId, samples, stepsChange(samples, 'UTC', HISTORY_END, 0));
  }
  return (performance.now() - started) / 1000;
}

async function createUser(db: Db): Promise<string> {
  const id = randomUUID();
  await db.kysely.insertInto('users').values({
    id,
    email: `bench-${id}@example.test`,
    password_hash: 'unused',
    display_name: 'Bench',
    created_at: 0,
    updated_at: 0,
    stride_length_cm: null,
  }).execute();
  return id;
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

async function timeSeries(db: Db, userId: string, name: string, request: SeriesRequest, runs: number): Promise<SeriesTiming> {
  const readStepSeries = createStepSeriesReader(createStores(db).steps.sums);
  let buckets = 0;
  // Warm-up: the zone's offset table, the prepared statements and SQLite's page cache, as on a
  // running server.
  for (let i = 0; i < 20; i++) buckets = (await readStepSeries(userId, request)).steps.length;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await readStepSeries(userId, request);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { name, buckets, medianMs: percentile(times, 0.5), p99Ms: percentile(times, 0.99) };
}

const daily = (days: number, timezone: string): SeriesRequest => ({
  granularity: 'day',
  timezone,
  start: HISTORY_END - days * DAY,
  end: HISTORY_END,
});

/** Runs the benchmark in a temporary SQLite file; `runs` timed requests per series. */
export async function runStepsSeriesBench(options: { runs?: number; log?: (line: string) => void } = {}): Promise<StepsSeriesBenchResult> {
  const runs = options.runs ?? 200;
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'stride-bench-steps-'));
  const db = openDatabase(`sqlite:${join(dir, 'bench.sqlite')}`);
  try {
    await migrateToLatest(db);
    const oneYear = await createUser(db);
    const threeYears = await createUser(db);
    const loadSeconds: Record<string, number> = {};
    log('loading 1 year of minutes (525,600 samples)…');
    loadSeconds['1 year'] = await loadHistory(db, oneYear, MINUTES_PER_YEAR);
    log('loading 3 years of minutes (1,576,800 samples) for a second user…');
    loadSeconds['3 years'] = await loadHistory(db, threeYears, 3 * MINUTES_PER_YEAR);

    const timings: SeriesTiming[] = [];
    const cases: Array<[string, string, SeriesRequest]> = [
      ['365 days daily, UTC', oneYear, daily(365, 'UTC')],
      ['365 days daily, Europe/Berlin', oneYear, daily(365, 'Europe/Berlin')],
      ['365 days daily, Asia/Kolkata', oneYear, daily(365, 'Asia/Kolkata')],
      ['1095 days daily, UTC (3-year history)', threeYears, daily(1095, 'UTC')],
      ['1095 days daily, Europe/Berlin (3-year history)', threeYears, daily(1095, 'Europe/Berlin')],
      ['30 days daily, UTC, 1-year history', oneYear, daily(30, 'UTC')],
      ['30 days daily, UTC, 3-year history', threeYears, daily(30, 'UTC')],
      ['31 days hourly, Europe/Berlin, 3-year history', threeYears, { ...daily(31, 'Europe/Berlin'), granularity: 'hour' }],
      ['1 day by minute, UTC, 3-year history', threeYears, { ...daily(1, 'UTC'), granularity: 'minute' }],
    ];
    for (const [name, userId, request] of cases) {
      const timing = await timeSeries(db, userId, name, request, runs);
      timings.push(timing);
      log(`${name.padEnd(48)} ${String(timing.buckets).padStart(5)} buckets  median ${timing.medianMs.toFixed(2)} ms  p99 ${timing.p99Ms.toFixed(2)} ms`);
    }
    return { loadSeconds, timings };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runStepsSeriesBench({ log: (line) => console.log(line) });
  for (const [history, seconds] of Object.entries(result.loadSeconds)) {
    console.log(`load ${history}: ${seconds.toFixed(1)} s through the upload path`);
  }
}
