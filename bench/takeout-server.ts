/**
 * Load 19 of `npm run bench` (docs/takeout.md, "Speed"): a Takeout archive of three years imported
 * by a running `stride serve` — its upload recorded as the account page records it, then read and
 * imported by the server's own runner — while another person asks `GET /v1/users/me` one request
 * after another. Measured: the server process's peak resident memory (VmHWM) over the read and the
 * import, and the times of the other person's answers: first for a few seconds with no import
 * (the reference), then while the archive is read, then while it is imported.
 *
 * Making the archive takes minutes (19 million readings written as Fitbit writes them, then
 * deflated): with BENCH_TAKEOUT_KEEP=DIR it is kept in DIR and reused by the next runs.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { openDatabase } from '../src/db/database.js';
import { importOf, importToRead, startImport } from '../src/domain/takeout/imports.js';
import { createStores } from '../src/store/stores.js';
import { datesFrom, takeoutHistory, writeTakeoutZip } from '../test/support/takeout-archive.js';
import type { Measurement } from './lib/loads.js';
import { obtainTokens } from './lib/oauth-client.js';
import { sampleRss, stopServer } from './lib/processes.js';
import { REDIRECT_URI, STRIDE_ENDPOINTS, cli, startStride } from './lib/servers.js';

/** Three years of the archive of load 18 (heart rate every 5 s, minute activity 07:00–23:00, sleep, weighings). */
export const YEARS = 3;
/** Seconds of the other person's requests before the upload: the reference. */
const QUIET_SECONDS = 5;

export interface TakeoutServerResult {
  /** The server's VmHWM at the end of the import, MB. */
  peakRssMb: number;
  /** GET /v1/users/me, ms: with no import, while the archive was read, while it was imported. */
  quiet: Measurement;
  reading: Measurement;
  importing: Measurement;
  readSeconds: number;
  importSeconds: number;
  readings: number;
  archiveBytes: number;
}

let made: { path: string; readings: number; bytes: number; folder: string | null } | null = null;

/** The archive's history; its readings: every 5 s of every UTC day of its local dates. */
const HISTORY = { zone: 'Europe/Berlin', dates: datesFrom('2022-01-01', 1096), heartRateEvery: 5, waking: [7, 23] as [number, number], weighEvery: 7 };
/** The name of a kept archive: its history's. */
const KEPT_NAME = 'takeout-3-years-berlin-2022-01-01-1096-days-hr5.zip';

/** The archive of three years, made once per run (or kept, BENCH_TAKEOUT_KEEP) and shared by the SQLite and PostgreSQL rows. */
async function threeYearArchive(log: (line: string) => void) {
  if (made) return made;
  const keep = process.env.BENCH_TAKEOUT_KEEP;
  const folder = keep ? null : await mkdtemp(join(tmpdir(), 'stride-bench-takeout-3y-'));
  const path = join(keep ?? folder!, KEPT_NAME);
  const started = performance.now();
  // A kept archive's readings are counted beside it.
  const counted = `${path}.readings`;
  let readings = existsSync(path) && existsSync(counted) ? Number(await readFile(counted, 'utf8')) : NaN;
  if (!(readings > 0)) {
    const { files, expected } = takeoutHistory(HISTORY);
    if (keep) await mkdir(keep, { recursive: true });
    await writeTakeoutZip(`${path}.part`, files);
    await rename(`${path}.part`, path);
    await writeFile(counted, String(expected.readings));
    readings = expected.readings;
  }
  made = { path, readings, bytes: (await stat(path)).size, folder };
  log(`load 19: an archive of ${YEARS} years, ${readings} heart-rate readings, ${(made.bytes / 1024 ** 2).toFixed(0)} MiB, made or found in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return made;
}

export async function removeThreeYearArchive(): Promise<void> {
  if (made?.folder) await rm(made.folder, { recursive: true, force: true });
  made = null;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

function timing(samples: number[], seconds: number, failed: number, rssMb: number | null, note: string): Measurement {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    rate: samples.length / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok: samples.length,
    failed,
    seconds,
    rssMb,
    cpu: { serverLoopUs: null, serverThreadsUs: null, driverUs: NaN },
    note: `${note}; slowest ${(sorted[sorted.length - 1] ?? NaN).toFixed(1)} ms`,
  };
}

export async function takeoutServerLoad(databaseUrl: string, label: string, log: (line: string) => void): Promise<TakeoutServerResult> {
  const archive = await threeYearArchive(log);
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const importer = { username: 'importer@example.com', password };
  const other = { username: 'other@example.com', password };
  for (const person of [importer, other]) await cli(databaseUrl, ['users', 'create', '--email', person.username, '--password', password]);
  const app = await cli<{ client_id: string; client_secret: string }>(databaseUrl, [
    'apps', 'create', '--owner', other.username, '--name', 'Profile reader', '--redirect-uri', REDIRECT_URI, '--scopes', 'read_profile',
  ]);
  const server = await startStride(databaseUrl, `${label} (Takeout import, ${YEARS} years)`);
  const db = openDatabase(databaseUrl);
  try {
    const stores = createStores(db);
    const client = { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI };
    const [tokens] = await obtainTokens(server.origin, STRIDE_ENDPOINTS(server.origin), client, other, { scope: 'read_profile' }, 1);
    const headers = { authorization: `Bearer ${tokens!.access_token}` };
    const person = (await stores.users.findByEmail(importer.username))!;
    const clock = () => Math.floor(Date.now() / 1000);

    // The other person, one request after another, each answer's time kept under the phase it began in.
    let phase = 'quiet' as 'quiet' | 'reading' | 'importing' | 'done';
    const times = { quiet: [] as number[], reading: [] as number[], importing: [] as number[] };
    const failures = { quiet: 0, reading: 0, importing: 0 };
    const asker = (async () => {
      while (phase !== 'done') {
        const during = phase as Exclude<typeof phase, 'done'>;
        const started = performance.now();
        try {
          const response = await request(`${server.origin}/v1/users/me`, { headers });
          await response.body.text();
          if (response.statusCode === 200) times[during].push(performance.now() - started);
          else failures[during]++;
        } catch {
          // A connection refused or reset is a failed answer, counted; the asking goes on.
          failures[during]++;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, QUIET_SECONDS * 1000));
    const rss = sampleRss(server.pid);
    phase = 'reading';
    const readStarted = performance.now();
    const reading = await importToRead(stores, person, { path: archive.path, name: 'takeout-3-years.zip', ownedByServer: false, bytes: archive.bytes }, clock());
    const waitFor = async (states: string[], limitSeconds: number) => {
      const until = performance.now() + limitSeconds * 1000;
      for (;;) {
        const view = await importOf(stores, person.id, reading.id);
        if (view && states.includes(view.state)) return view;
        if (performance.now() > until) throw new Error(`load 19: the import is ${view?.state} after ${limitSeconds} s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const previewed = await waitFor(['previewed', 'failed'], 300);
    if (previewed.state !== 'previewed') throw new Error(`load 19: the archive was refused: ${previewed.error}`);
    const readSeconds = (performance.now() - readStarted) / 1000;
    phase = 'importing';
    const importStarted = performance.now();
    const queued = await startImport(stores, person.id, reading.id, clock());
    if ('refused' in queued) throw new Error(queued.refused);
    const done = await waitFor(['done', 'failed', 'cancelled'], 1200);
    const importSeconds = (performance.now() - importStarted) / 1000;
    phase = 'done';
    await asker;
    const { hwmMb } = rss.stop();
    if (done.state !== 'done') throw new Error(`load 19: the import ended ${done.state}: ${done.error}`);
    const heartRate = done.report.kinds.find((kind) => kind.kind === 'heartrate')!;
    if (heartRate.entries !== archive.readings) throw new Error(`load 19: ${heartRate.entries} readings imported of ${archive.readings}`);
    return {
      peakRssMb: hwmMb,
      quiet: timing(times.quiet, QUIET_SECONDS, failures.quiet, null, `GET /v1/users/me of another person, one after another, no import running (${QUIET_SECONDS} s)`),
      reading: timing(times.reading, readSeconds, failures.reading, hwmMb, `the same while the server read the archive (${readSeconds.toFixed(1)} s)`),
      importing: timing(times.importing, importSeconds, failures.importing, hwmMb, `the same while the server imported it (${importSeconds.toFixed(1)} s, ${Math.round(archive.readings / importSeconds).toLocaleString('en')} readings/s)`),
      readSeconds,
      importSeconds,
      readings: archive.readings,
      archiveBytes: archive.bytes,
    };
  } finally {
    await stopServer(server);
    await db.close();
  }
}
