/** `stride backup` and `stride restore` (src/db/backup.ts) on a real SQLite file, while a server writes. */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { createTestApp, type TestApp } from '../support/app.js';
import { POSTGRES_URL, postgresUnavailable } from '../support/databases.js';
import { runCliInProcess } from '../support/cli.js';
import { bearer, createUser, userWithToken } from '../support/tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'stride-backup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let t: TestApp;
before(async () => {
  t = await createTestApp('sqlite');
});
after(() => t.close());

const cli = (...args: string[]) => runCliInProcess(args, { DATABASE_URL: t.database.url });
const emails = (file: string) => {
  const db = new SQLite(file, { readonly: true });
  try {
    return db.prepare('select email from users order by email').pluck().all() as string[];
  } finally {
    db.close();
  }
};

it('copies the database while the server writes: a whole file holding what was committed before', async () => {
  const { token } = await userWithToken(t);
  const before = emails(t.database.url.slice('sqlite:'.length));
  let writing = true;
  const uploads = (async () => {
    for (let minute = 0; writing; minute++) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: bearer(token), payload: { samples: [{ start_time: t.clock() - 86400 + minute * 60 - ((t.clock() - 86400) % 60), value: 5 }] } });
      assert.equal(response.statusCode, 200);
    }
  })();
  const file = join(dir, 'while-writing.sqlite');
  const run = await cli('backup', file, '--json');
  writing = false;
  await uploads;
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).file, file);
  const copy = new SQLite(file, { readonly: true });
  try {
    assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  } finally {
    copy.close();
  }
  for (const email of before) assert.ok(emails(file).includes(email), email);
  assert.notEqual((await cli('backup', file)).code, 0, 'an existing file is never overwritten');
});

it('writes a backup only the operator can read, never into a file someone made in advance', async () => {
  const file = join(dir, 'private.sqlite');
  assert.equal((await cli('backup', file)).code, 0);
  assert.equal(statSync(file).mode & 0o777, 0o600, 'it holds the server\'s keys, webhook secrets and password hashes');
  // Another user of a shared folder plants the file the backup is first written to, readable by all.
  const planted = join(dir, 'planted.sqlite');
  writeFileSync(`${planted}.partial`, '', { mode: 0o666 });
  chmodSync(`${planted}.partial`, 0o666);
  const run = await cli('backup', planted);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /could not create .*planted\.sqlite\.partial/);
  assert.equal(statSync(`${planted}.partial`).size, 0, 'nothing was written into it');
  assert.equal(existsSync(planted), false);
});

it('restores a backup: data written after it is gone, what it held is back', async () => {
  const kept = await createUser(t);
  const file = join(dir, 'round-trip.sqlite');
  assert.equal((await cli('backup', file)).code, 0);
  const later = await createUser(t);
  const run = await cli('restore', file, '--json');
  assert.equal(run.code, 0, run.stderr);
  const now = emails(t.database.url.slice('sqlite:'.length));
  assert.ok(now.includes(kept.email));
  assert.ok(!now.includes(later.email));
  assert.deepEqual(JSON.parse(run.stdout).migrations.slice(0, 1), ['001_initial']);
});

it('refuses what is not a Stride backup, and leaves the database as it was', async () => {
  const target = t.database.url.slice('sqlite:'.length);
  const beforeRestore = emails(target);
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'not a database at all\n'.repeat(100));
  const foreign = join(dir, 'foreign.sqlite');
  const other = new SQLite(foreign);
  other.exec('create table notes (body text)');
  other.close();
  for (const [file, reason] of [[text, /not a Stride database backup|cannot open/], [foreign, /not a Stride database backup/], [join(dir, 'missing.sqlite'), /cannot open/]] as const) {
    const run = await cli('restore', file);
    assert.equal(run.code, 1, file);
    assert.match(run.stderr, reason);
    assert.equal(run.stderr.trim().split('\n').length, 1);
  }
  assert.deepEqual(emails(target), beforeRestore);
  assert.equal(readFileSync(text, 'utf8').length > 0, true);
});

it('on PostgreSQL names pg_dump instead', { skip: postgresUnavailable() ?? false }, async () => {
  for (const args of [['backup', join(dir, 'pg.sqlite')], ['restore', join(dir, 'round-trip.sqlite')]]) {
    const run = await runCliInProcess(args, { DATABASE_URL: POSTGRES_URL! });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /pg_dump/);
  }
});
