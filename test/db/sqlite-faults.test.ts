/**
 * The embedded SQLite file on a disk that fills up, and on files that turn read-only, under a real
 * `stride serve` on a filesystem of the test's own (small-filesystem.ts). Writes — a steps upload,
 * a refresh-token rotation, a sign-up — are answered 503 `temporarily_unavailable` with
 * Retry-After and no internals; reads go on; nothing is half-written (an upload is all there or
 * absent, a refresh token is not spent by a rotation that failed); the file stays sound (PRAGMA
 * integrity_check); and once space is freed or the files are writable again the same process
 * writes again, with no restart.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freePort, startServer } from '../support/cli.js';
import { minutesOfDays } from '../support/series-days.js';
import { seedClient, type Seeded } from '../support/fault-load.js';
import {
  ext4ImageUnavailable,
  fillDisk,
  mountExt4Image,
  mountTmpfs,
  setImmutable,
  smallFilesystemUnavailable,
  type SmallFilesystem,
} from '../support/small-filesystem.js';

const DAY = 86_400;
/** A week of minutes, the most one upload may carry: the write needs far more room than is left. */
const WEEK_MINUTES = 10_080;

interface Served {
  fs: SmallFilesystem;
  file: string;
  server: ChildProcess;
  output: () => string;
  baseUrl: string;
  seeded: Seeded;
}

async function serveOn(fs: SmallFilesystem): Promise<Served> {
  const file = join(fs.dir, 'stride.sqlite');
  const url = `sqlite:${file}`;
  const db = openDatabase(url);
  await migrateToLatest(db);
  const seeded = await seedClient(db, 1);
  await db.close();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = await startServer(port, { DATABASE_URL: url, PUBLIC_URL: baseUrl, RATE_LIMIT: 'off', LOG_LEVEL: 'warn' });
  let output = '';
  server.stdout?.on('data', (chunk) => (output += chunk));
  server.stderr?.on('data', (chunk) => (output += chunk));
  return { fs, file, server, output: () => output, baseUrl, seeded };
}

async function stop(served: Served | undefined): Promise<void> {
  if (!served) return;
  if (served.server.exitCode === null && served.server.signalCode === null) {
    const exited = new Promise((resolve) => served.server.once('exit', resolve));
    served.server.kill('SIGTERM');
    await exited;
  }
}

/** The HTTP requests of the scenario, as a client and a browser send them. */
function client(served: Served) {
  const { baseUrl, seeded } = served;
  const bearer = { authorization: `Bearer ${seeded.accessToken}` };
  const request = async (path: string, init: RequestInit = {}) => {
    const started = Date.now();
    const response = await fetch(`${baseUrl}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init });
    const body = await response.text();
    return { status: response.status, headers: response.headers, body, ms: Date.now() - started };
  };
  return {
    upload: (samples: { start_time: number; value: number }[]) =>
      request('/v1/users/me/activities/steps/', { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ samples }) }),
    total: async (start: number, end: number) => {
      const answer = await request(`/v1/users/me/activities/steps/?start_time=${start}&end_time=${end}&granularity=day&timezone=UTC`, { headers: bearer });
      assert.equal(answer.status, 200, answer.body);
      return (JSON.parse(answer.body) as { total: number }).total;
    },
    profile: () => request('/v1/users/me', { headers: bearer }),
    refresh: () =>
      request('/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: seeded.refreshTokens[0]!, client_id: seeded.clientId, client_secret: seeded.clientSecret }).toString(),
      }),
    signUp: async (email: string) => {
      const form = await request('/signup');
      assert.equal(form.status, 200, form.body);
      const cookie = form.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(form.body)?.[1];
      assert.ok(csrf, 'the sign-up form carries a CSRF token');
      return request('/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ email, password: 'correct horse battery staple', display_name: 'Disk Tester', csrf_token: csrf }).toString(),
      });
    },
  };
}

type Answer = Awaited<ReturnType<ReturnType<typeof client>['upload']>>;

function assert503(answer: Answer, page = false): void {
  const where = `${answer.status} in ${answer.ms} ms: ${answer.body.slice(0, 300)}`;
  assert.equal(answer.status, 503, where);
  assert.match(answer.headers.get('retry-after') ?? '', /^[1-9]\d*$/, where);
  if (page) {
    assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, where);
  } else {
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], where);
    assert.equal(body.error, 'temporarily_unavailable', where);
  }
  assert.doesNotMatch(answer.body, /SQLITE|disk I\/O|database or disk is full|readonly|\.js:\d|insert|update/i, `internals leaked: ${where}`);
}

/** A week of samples from `start` (a multiple of 60), each 1..100. */
const week = (start: number) => Array.from({ length: WEEK_MINUTES }, (_, i) => ({ start_time: start + 60 * i, value: (i % 100) + 1 }));
const sum = (samples: { value: number }[]) => samples.reduce((total, sample) => total + sample.value, 0);

/**
 * The whole scenario: writes refused while `fault` holds, reads served, then `repair` and the same
 * writes accepted by the same process, the file sound and every upload whole.
 */
async function writesRefusedThenRecovered(served: Served, fault: () => Promise<void>, repair: () => Promise<void>): Promise<void> {
  const c = client(served);
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
  const batch = week(today - 14 * DAY);
  const range = [today - 14 * DAY, today - 7 * DAY] as const;

  await fault();
  try {
    const refused = await c.upload(batch);
    // The server's log says what it met, when the answer is not the one expected.
    if (refused.status !== 503) console.log(served.output().slice(-3000));
    assert503(refused);
    assert503(await c.refresh());
    assert503(await c.signUp(`full-${Date.now()}@example.test`), true);
    // Reads go on.
    const profile = await c.profile();
    assert.equal(profile.status, 200, profile.body);
    assert.equal(await c.total(...range), 0, 'the refused upload left nothing behind');
    assert.equal((await fetch(`${served.baseUrl}/readyz`)).status, 200, 'the database still answers reads');
    assert.equal(served.server.exitCode, null, `the server exited: ${served.output().slice(-2000)}`);
  } finally {
    await repair();
  }

  // The same process writes again; the refresh token the failed rotation did not spend works.
  const upload = await c.upload(batch);
  assert.equal(upload.status, 200, upload.body);
  assert.deepEqual(JSON.parse(upload.body), { accepted: WEEK_MINUTES });
  assert.equal(await c.total(...range), sum(batch));
  const refreshed = await c.refresh();
  assert.equal(refreshed.status, 200, refreshed.body);
  const signedUp = await c.signUp(`back-${Date.now()}@example.test`);
  assert.equal(signedUp.status, 303, signedUp.body);

  await stop(served);
  const check = new SQLite(served.file, { readonly: true });
  try {
    assert.deepEqual(check.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    const days = check.prepare('select day_start, minutes from series_days').all() as Array<{ day_start: number; minutes: Buffer }>;
    const minutes = minutesOfDays(days).filter((m) => m.minute_start >= range[0] && m.minute_start < range[1]);
    assert.equal(minutes.length, WEEK_MINUTES, 'the upload is there once, whole');
  } finally {
    check.close();
  }
}

const noTmpfs = smallFilesystemUnavailable();
if (noTmpfs) console.log(`# skipping the SQLite disk-full test: ${noTmpfs}`);

describe('SQLite on a disk that fills up', { skip: noTmpfs ?? false }, () => {
  let served: Served | undefined;
  before(async () => {
    served = await serveOn(await mountTmpfs(4 * 1024 * 1024));
  });
  after(async () => {
    await stop(served);
    await served?.fs.unmount();
  });

  it('refuses writes with 503 (SQLITE_FULL) while the disk is full, serves reads, and writes again once space is freed', async () => {
    let filler: { free(): void } | undefined;
    await writesRefusedThenRecovered(
      served!,
      async () => {
        filler = fillDisk(served!.fs.dir);
      },
      async () => filler?.free(),
    );
  });
});

const noExt4 = ext4ImageUnavailable();
if (noExt4) console.log(`# skipping the SQLite read-only test: ${noExt4}`);

describe('SQLite files that turn read-only', { skip: noExt4 ?? false }, () => {
  let served: Served | undefined;
  before(async () => {
    served = await serveOn(await mountExt4Image(16 * 1024 * 1024));
  });
  after(async () => {
    if (served) await setImmutable([served.file, `${served.file}-wal`], false).catch(() => undefined);
    await stop(served);
    await served?.fs.unmount();
  });

  it('refuses writes with 503 while the database and its log refuse writes, serves reads, and writes again once they are writable', async () => {
    const files = [served!.file, `${served!.file}-wal`];
    await writesRefusedThenRecovered(
      served!,
      () => setImmutable(files, true),
      () => setImmutable(files, false),
    );
  });
});
