/**
 * Load 18 of `npm run bench` (docs/takeout.md): the import of a Google Takeout archive of a year —
 * minute steps, distance and calories for the waking hours, heart rate every 5 seconds, a night's
 * sleep and a weekly weighing — generated as a real zip (test/support/takeout-archive.ts), then
 * previewed and imported for a new person on a fresh database by the runner's own call, in this
 * process. The rate is heart-rate readings imported per second of the import (the preview apart).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createAccount } from '../src/domain/users.js';
import { archiveLimits, importOf, previewImport, startImport } from '../src/domain/takeout/imports.js';
import { claimAndRun } from '../src/domain/takeout/runner.js';
import { createStores } from '../src/store/stores.js';
import { datesFrom, takeoutHistory, writeTakeoutZip } from '../test/support/takeout-archive.js';
import type { Measurement } from './lib/loads.js';

export interface TakeoutImportResult {
  import: Measurement;
  readings: number;
  previewSeconds: number;
  importSeconds: number;
  archiveBytes: number;
}

/** The archive of a year, made once per run and shared by the SQLite and PostgreSQL rows. */
let made: { path: string; readings: number; bytes: number; folder: string } | null = null;

async function yearArchive(log: (line: string) => void) {
  if (made) return made;
  const folder = await mkdtemp(join(tmpdir(), 'stride-bench-takeout-'));
  const path = join(folder, 'takeout.zip');
  const started = performance.now();
  const { files, expected } = takeoutHistory({ zone: 'Europe/Berlin', dates: datesFrom('2024-01-01', 366), heartRateEvery: 5, waking: [7, 23], weighEvery: 7 });
  await writeTakeoutZip(path, files);
  made = { path, readings: expected.readings, bytes: (await stat(path)).size, folder };
  log(`load 18: a year's archive, ${expected.readings} heart-rate readings, ${(made.bytes / 1024 ** 2).toFixed(0)} MiB, made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return made;
}

/** Removes the archive made for the run. */
export async function removeTakeoutArchive(): Promise<void> {
  if (made) await rm(made.folder, { recursive: true, force: true });
  made = null;
}

export async function takeoutImportLoad(databaseUrl: string, log: (line: string) => void): Promise<TakeoutImportResult> {
  const archive = await yearArchive(log);
  const db = openDatabase(databaseUrl);
  try {
    await migrateToLatest(db);
    const stores = createStores(db);
    const clock = () => Math.floor(Date.now() / 1000);
    const person = await createAccount(stores.users, clock, { email: `takeout-${Date.now()}@example.test`, password: 'bench-takeout-password' });
    const limits = archiveLimits(8 * 1024 ** 3);
    const previewStarted = performance.now();
    const previewed = await previewImport(stores, person, { path: archive.path, name: 'takeout.zip', ownedByServer: false }, limits, clock());
    const previewSeconds = (performance.now() - previewStarted) / 1000;
    const queued = await startImport(stores, person.id, previewed.id, clock());
    if ('refused' in queued) throw new Error(queued.refused);
    const cpuBefore = process.cpuUsage();
    const importStarted = performance.now();
    const end = await claimAndRun(stores, 'bench', { leaseSeconds: 60, coalesceSeconds: 30, limits, clock }, previewed.id);
    const importSeconds = (performance.now() - importStarted) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const view = await importOf(stores, person.id, previewed.id);
    if (end !== 'finished' || view?.state !== 'done') throw new Error(`the import ended ${end}, ${view?.state}: ${view?.error}`);
    const heartRate = view.report.kinds.find((kind) => kind.kind === 'heartrate')!;
    if (heartRate.entries !== archive.readings) throw new Error(`${heartRate.entries} readings imported of ${archive.readings}`);
    const rate = archive.readings / importSeconds;
    return {
      import: {
        rate,
        p50: NaN,
        p99: NaN,
        ok: view.progress.files_total,
        failed: 0,
        seconds: importSeconds,
        rssMb: process.memoryUsage().rss / 1024 ** 2,
        cpu: { serverLoopUs: (cpu.user + cpu.system) / archive.readings, serverThreadsUs: null, driverUs: NaN },
        note: `${archive.readings} readings and ${view.report.kinds.reduce((sum, kind) => sum + kind.written, 0)} records of every kind from ${view.progress.files_total} files (${(archive.bytes / 1024 ** 2).toFixed(0)} MiB zip) in ${importSeconds.toFixed(1)} s; the preview before it read them all in ${previewSeconds.toFixed(1)} s`,
      },
      readings: archive.readings,
      previewSeconds,
      importSeconds,
      archiveBytes: archive.bytes,
    };
  } finally {
    await db.close();
  }
}
