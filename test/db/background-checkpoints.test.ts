/**
 * WAL checkpoints in a worker thread (src/db/background-checkpoints.ts) on a real SQLite file: the
 * worker copies the log into the database file without the server's connection doing it, the log
 * stays bounded while writes never pause, and a worker that fails hands checkpoints back.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { startBackgroundCheckpoints } from '../../src/db/background-checkpoints.js';
import { openDatabase } from '../../src/db/database.js';

const dir = mkdtempSync(join(tmpdir(), 'stride-checkpoints-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
const PAGE_AND_FRAME_HEADER = 4096 + 24;

function withTable(handle: SQLite.Database): SQLite.Statement<[string]> {
  handle.exec('create table t (id integer primary key, v text)');
  return handle.prepare('insert into t (v) values (?)');
}

describe('background WAL checkpoints', () => {
  it('copy committed pages into the database file while the server connection does not', { timeout: 20_000 }, async () => {
    const file = join(dir, 'copied.sqlite');
    const db = openDatabase(`sqlite:${file}`, { backgroundCheckpoints: { onError: (error) => assert.fail(error) } });
    try {
      const insert = withTable(db.sqlite!);
      const before = size(file);
      // About 1 MB of pages: 250 pages of log, far below the server connection's own threshold.
      const rows = db.sqlite!.transaction(() => {
        for (let i = 0; i < 100; i++) insert.run('x'.repeat(500));
      });
      for (let i = 0; i < 20; i++) rows();
      assert.ok(size(file) - before < 200_000, 'the commits themselves only append to the log');
      const deadline = Date.now() + 5000;
      while (size(file) - before < 900_000 && Date.now() < deadline) await sleep(20);
      assert.ok(size(file) - before >= 900_000, `database file grew by ${size(file) - before} bytes`);
      assert.equal(db.sqlite!.pragma('wal_autocheckpoint', { simple: true }), 10_000);
    } finally {
      await db.close();
    }
  });

  it('keep the log bounded while writes never pause: the backstop restarts it', { timeout: 20_000 }, async () => {
    const file = join(dir, 'bounded.sqlite');
    const handle = new SQLite(file);
    handle.pragma('journal_mode = WAL');
    handle.pragma('synchronous = NORMAL');
    const insert = withTable(handle);
    const checkpoints = startBackgroundCheckpoints(handle, file, { backstopPages: 100 });
    try {
      await sleep(200); // the worker is running
      // 3,000 commits of 3–4 pages each: some 12,000 pages (48 MB) of log if it never started over.
      const rows = handle.transaction(() => {
        for (let i = 0; i < 4; i++) insert.run('y'.repeat(1500));
      });
      let largest = 0;
      for (let i = 0; i < 3000; i++) {
        rows();
        largest = Math.max(largest, size(`${file}-wal`));
      }
      // The backstop checkpoint cannot run while the worker's holds the checkpoint lock: a few
      // commits more than 100 pages (about 340 measured), far from 12,000.
      assert.ok(largest <= 1000 * PAGE_AND_FRAME_HEADER, `the log reached ${largest} bytes`);
      assert.equal((handle.prepare('select count(*) from t').pluck().get() as number), 12_000);
    } finally {
      await checkpoints.stop();
      handle.close();
    }
  });

  it('hand checkpoints back to the server connection when the worker fails', { timeout: 20_000 }, async () => {
    const handle = new SQLite(join(dir, 'fallback.sqlite'));
    handle.pragma('journal_mode = WAL');
    // The worker cannot open a file that does not exist, and stops with an error.
    const errors: Error[] = [];
    const checkpoints = startBackgroundCheckpoints(handle, join(dir, 'missing.sqlite'), { onError: (error) => errors.push(error) });
    try {
      const deadline = Date.now() + 5000;
      while (errors.length === 0 && Date.now() < deadline) await sleep(20);
      assert.equal(errors.length, 1);
      assert.match(errors[0]!.message, /^cannot open .*missing\.sqlite for checkpoints: unable to open database file \(SQLITE_CANTOPEN\)$/);
      assert.equal(handle.pragma('wal_autocheckpoint', { simple: true }), 1000);
    } finally {
      await checkpoints.stop();
      handle.close();
    }
  });

  it('stop once, however often asked: no checkpoint after, and the worker\u2019s connection closed', { timeout: 10_000 }, async () => {
    const file = join(dir, 'stopped.sqlite');
    const handle = new SQLite(file);
    handle.pragma('journal_mode = WAL');
    const insert = withTable(handle);
    const errors: Error[] = [];
    const checkpoints = startBackgroundCheckpoints(handle, file, { intervalMs: 20, onError: (error) => errors.push(error) });
    await sleep(100);
    await Promise.all([checkpoints.stop(), checkpoints.stop()]);
    await checkpoints.stop();
    // Stopped: commits stay in the log, however many intervals pass.
    const before = size(file);
    handle.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run('z'.repeat(500));
    })();
    await sleep(200);
    assert.equal(size(file), before, 'nothing copied into the database file after stop');
    assert.ok(size(`${file}-wal`) > 50_000, 'the commits are in the log');
    // The worker's connection is closed: the server's is the last, so closing it copies the log
    // back and deletes it (SQLite keeps the log while another connection has the file open).
    handle.close();
    assert.equal(existsSync(`${file}-wal`), false, 'the log is gone with the last connection');
    const reopened = new SQLite(file, { readonly: true });
    try {
      assert.equal(reopened.prepare('select count(*) from t').pluck().get(), 100);
    } finally {
      reopened.close();
    }
    assert.deepEqual(errors, []);
  });

  it('are not started for a database opened without them (the CLI)', async () => {
    const file = join(dir, 'cli.sqlite');
    const db = openDatabase(`sqlite:${file}`);
    try {
      assert.equal(db.sqlite!.pragma('wal_autocheckpoint', { simple: true }), 1000);
    } finally {
      await db.close();
    }
  });
});
