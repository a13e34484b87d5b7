/**
 * Load 20 of `npm run bench` (docs/takeout.md, "Speed"): the bytes a year takes once imported from
 * a Takeout archive, against the same year uploaded through the resource API, each for one person
 * on a fresh database, measured as load 7 measures (size-load.ts): the SQLite file's growth after
 * `wal_checkpoint(TRUNCATE)`, or PostgreSQL's `pg_total_relation_size` of the data tables. The
 * year is load 18's (test/support/takeout-archive.ts); through the API it is what a device's app
 * sends: each UTC day's minutes of steps, distance and calories and its heart-rate readings (every
 * 5 s) in one request each, then each night and each weighing.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { archiveLimits, importOf, previewImport, startImport } from '../src/domain/takeout/imports.js';
import { claimAndRun } from '../src/domain/takeout/runner.js';
import { createAccount } from '../src/domain/users.js';
import { createStores } from '../src/store/stores.js';
import { datesFrom, heartRateUploads, takeoutHistory, writeTakeoutZip, type History } from '../test/support/takeout-archive.js';
import { connection, send } from './lib/browser.js';
import { obtainTokens } from './lib/oauth-client.js';
import { byUtcDay, WRITE_SCOPES } from './lib/person-upload.js';
import { temporaryPostgresDatabase } from './lib/postgres.js';
import { stopServer } from './lib/processes.js';
import { cli, REDIRECT_URI, startStride, STRIDE_ENDPOINTS } from './lib/servers.js';
import { DATA_TABLES, postgresParts, sqliteMeasurer, type Measured, type Measurer } from './size-load.js';

const HISTORY: History = { zone: 'Europe/Berlin', dates: datesFrom('2024-01-01', 366), heartRateEvery: 5, waking: [7, 23], weighEvery: 7 };
const DAYS = HISTORY.dates.length;

export interface TakeoutSizeResult {
  dialect: 'sqlite' | 'postgres';
  /** Bytes per person-day, imported and uploaded. */
  imported: number;
  uploaded: number;
  /** Per table or index, bytes per person-day. */
  importedParts: Record<string, number>;
  uploadedParts: Record<string, number>;
  uploadRequests: number;
  importSeconds: number;
  uploadSeconds: number;
  /** Where bytes beside the rows are, imported and uploaded (not counted apart in the figure: it is the file's, or the tables'). */
  importedLeftovers: Leftovers;
  uploadedLeftovers: Leftovers;
}

/**
 * What a database holds beside its live rows once the year is in: on SQLite, the file's free
 * pages (freed by deletes, kept in the file for later writes); on PostgreSQL, how often rows of
 * `series_days` were written and the dead row versions left until a vacuum.
 */
export interface Leftovers {
  freeBytes?: number;
  seriesInserts?: number;
  seriesUpdates?: number;
  seriesDead?: number;
}

/** A fresh database of the dialect, and how to measure it. */
async function freshDatabase(dialect: 'sqlite' | 'postgres', postgresUrl: string | undefined, workDir: string, name: string) {
  if (dialect === 'postgres') {
    const temporary = await temporaryPostgresDatabase(postgresUrl!, `tsize_${name}`);
    const measurer: Measurer = {
      async measure() {
        // The data tables only: an import tells its changes in events of its own shape.
        const all = await postgresParts(temporary.reader);
        const parts = Object.fromEntries(Object.entries(all).filter(([name]) => (DATA_TABLES as readonly string[]).includes(name.split('/')[0]!)));
        return { file: null, parts, events: 0, eventRows: 0 };
      },
      async close() {},
    };
    const leftovers = async (): Promise<Leftovers> => {
      const { rows } = await temporary.reader.query<{ inserts: number; updates: number; dead: number }>(
        `SELECT sum(n_tup_ins)::int AS inserts, sum(n_tup_upd)::int AS updates, sum(n_dead_tup)::int AS dead FROM pg_stat_user_tables WHERE relid IN (SELECT relid FROM pg_partition_tree('series_days'))`,
      );
      return { seriesInserts: rows[0]!.inserts, seriesUpdates: rows[0]!.updates, seriesDead: rows[0]!.dead };
    };
    return { url: temporary.url, measurer: () => measurer, leftovers, drop: () => temporary.drop() };
  }
  const file = join(workDir, `${name}.sqlite`);
  const leftovers = async (): Promise<Leftovers> => {
    const db = new Database(file, { readonly: true });
    try {
      return { freeBytes: (db.pragma('freelist_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number) };
    } finally {
      db.close();
    }
  };
  return { url: `sqlite:${file}`, measurer: () => sqliteMeasurer(file), leftovers, drop: async () => undefined };
}

/** The file's bytes on SQLite, the data tables' on PostgreSQL. */
const totalOf = (measured: Measured) => measured.file ?? Object.values(measured.parts).reduce((sum, bytes) => sum + bytes, 0);

function growth(before: Measured, after: Measured) {
  const parts: Record<string, number> = {};
  for (const name of new Set([...Object.keys(before.parts), ...Object.keys(after.parts)])) {
    const grown = (after.parts[name] ?? 0) - (before.parts[name] ?? 0);
    if (grown !== 0) parts[name] = grown / DAYS;
  }
  return { perDay: (totalOf(after) - totalOf(before)) / DAYS, parts };
}

/** What the year added of each leftover. */
function leftoversGrown(before: Leftovers, after: Leftovers): Leftovers {
  return Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - (before[name as keyof Leftovers] ?? 0)]));
}

/** The year imported in this process, as load 18 imports it. */
async function importedYear(databaseUrl: string, measurer: () => Measurer, leftovers: () => Promise<Leftovers>, archivePath: string) {
  const setup = openDatabase(databaseUrl);
  await migrateToLatest(setup);
  const clock = () => Math.floor(Date.now() / 1000);
  const person = await createAccount(createStores(setup).users, clock, { email: 'importer@example.com', password: 'bench-takeout-password' });
  await setup.close();
  const measuring = measurer();
  const before = await measuring.measure();
  const leftBefore = await leftovers();
  const db = openDatabase(databaseUrl);
  const started = performance.now();
  try {
    const stores = createStores(db);
    const limits = archiveLimits(8 * 1024 ** 3);
    const previewed = await previewImport(stores, person, { path: archivePath, name: 'takeout.zip', ownedByServer: false }, limits, clock());
    const queued = await startImport(stores, person.id, previewed.id, clock());
    if ('refused' in queued) throw new Error(queued.refused);
    await claimAndRun(stores, 'bench', { leaseSeconds: 60, coalesceSeconds: 30, limits, clock }, previewed.id);
    const view = await importOf(stores, person.id, previewed.id);
    if (view?.state !== 'done') throw new Error(`load 20: the import ended ${view?.state}: ${view?.error}`);
  } finally {
    await db.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await measuring.measure();
  await measuring.close();
  return { ...growth(before, after), seconds, leftovers: leftoversGrown(leftBefore, await leftovers()) };
}

/** The same year sent through the resource API of a running Stride. */
async function uploadedYear(databaseUrl: string, measurer: () => Measurer, leftovers: () => Promise<Leftovers>, label: string) {
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const person = { username: 'uploader@example.com', password };
  await cli(databaseUrl, ['users', 'create', '--email', person.username, '--password', password]);
  const app = await cli<{ client_id: string; client_secret: string }>(databaseUrl, [
    'apps', 'create', '--owner', person.username, '--name', 'Device Sync', '--redirect-uri', REDIRECT_URI, '--scopes', WRITE_SCOPES.replaceAll(' ', ','),
  ]);
  const server = await startStride(databaseUrl, `${label} (Takeout size, uploads)`);
  const measuring = measurer();
  try {
    const [token] = await obtainTokens(server.origin, STRIDE_ENDPOINTS(server.origin), { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI }, person, { scope: WRITE_SCOPES }, 1);
    const before = await measuring.measure();
    const leftBefore = await leftovers();
    const { expected } = takeoutHistory(HISTORY);
    const client = connection(server.origin, 60_000);
    const headers = { authorization: `Bearer ${token!.access_token}`, 'content-type': 'application/json' };
    let requests = 0;
    const post = async (path: string, body: unknown) => {
      const answer = await send(client, path, { method: 'POST', headers, body: JSON.stringify(body) });
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`load 20: POST ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
      requests++;
    };
    const started = performance.now();
    try {
      for (const metric of ['steps', 'distance', 'calories'] as const) {
        for (const samples of byUtcDay(expected[metric], (s) => s.start_time)) await post(`/v1/users/me/activities/${metric}`, { samples });
      }
      for (const samples of heartRateUploads(HISTORY)) await post('/v1/users/me/heartrate', { samples });
      for (const session of expected.sleep) await post('/v1/users/me/sleep', session);
      for (const weighing of expected.weight) await post('/v1/users/me/body/weight', weighing);
    } finally {
      await client.destroy();
    }
    const seconds = (performance.now() - started) / 1000;
    await stopServer(server);
    const after = await measuring.measure();
    return { ...growth(before, after), seconds, requests, leftovers: leftoversGrown(leftBefore, await leftovers()) };
  } finally {
    await stopServer(server);
    await measuring.close();
  }
}

export async function takeoutSizeLoad(dialect: 'sqlite' | 'postgres', postgresUrl: string | undefined, log: (line: string) => void): Promise<TakeoutSizeResult> {
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-takeout-size-'));
  const label = dialect === 'sqlite' ? 'Stride SQLite' : 'Stride PostgreSQL';
  const databases: Array<{ drop(): Promise<unknown> }> = [];
  try {
    const archivePath = join(workDir, 'takeout.zip');
    await writeTakeoutZip(archivePath, takeoutHistory(HISTORY).files);
    const forImport = await freshDatabase(dialect, postgresUrl, workDir, 'imported');
    databases.push(forImport);
    log(`load 20: a year imported from its archive (${label})…`);
    const imported = await importedYear(forImport.url, forImport.measurer, forImport.leftovers, archivePath);
    const forUpload = await freshDatabase(dialect, postgresUrl, workDir, 'uploaded');
    databases.push(forUpload);
    log(`load 20: the same year uploaded through the API (${label})…`);
    const uploaded = await uploadedYear(forUpload.url, forUpload.measurer, forUpload.leftovers, label);
    return {
      dialect,
      imported: imported.perDay,
      uploaded: uploaded.perDay,
      importedParts: imported.parts,
      uploadedParts: uploaded.parts,
      uploadRequests: uploaded.requests,
      importSeconds: imported.seconds,
      uploadSeconds: uploaded.seconds,
      importedLeftovers: imported.leftovers,
      uploadedLeftovers: uploaded.leftovers,
    };
  } finally {
    for (const database of databases) await database.drop();
    await rm(workDir, { recursive: true, force: true });
  }
}
