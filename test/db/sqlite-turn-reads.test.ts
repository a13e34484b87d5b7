/**
 * SQLite reads of one turn (db/sqlite-turn-reads.ts): read together in one read transaction, each
 * caller with its own answer or its own error, and a snapshot that a write made between the turns
 * does not reach back into.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import Database from 'better-sqlite3';
import { sqliteTurnReads } from '../../src/db/sqlite-turn-reads.js';

let dir: string;
let handle: Database.Database;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'stride-turn-reads-'));
  handle = new Database(join(dir, 'reads.sqlite'));
  handle.pragma('journal_mode = WAL');
  handle.exec('create table t (k integer primary key, v text)');
  handle.prepare('insert into t values (1, ?), (2, ?)').run('one', 'two');
});
after(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

it('reads of one turn run together in one transaction, each answered with its own result', async () => {
  const read = sqliteTurnReads(handle);
  assert.equal(sqliteTurnReads(handle), read, 'one batcher per handle');
  const select = handle.prepare('select v from t where k = ?').pluck(true);
  const seen: boolean[] = [];
  const answers = await Promise.all([1, 2, 3].map((k) => read(() => (seen.push(handle.inTransaction), select.get(k)))));
  assert.deepEqual(answers, ['one', 'two', undefined]);
  assert.deepEqual(seen, [true, true, true], 'inside one read transaction');
  assert.equal(handle.inTransaction, false, 'and it is over when the answers arrive');
  assert.equal(await read(() => select.get(1)), 'one', 'a read alone is answered too');
});

it('a read that throws fails only its own caller', async () => {
  const read = sqliteTurnReads(handle);
  const results = await Promise.allSettled([
    read(() => handle.prepare('select v from t where k = 1').pluck(true).get()),
    read(() => handle.prepare('select v from no_such_table').get()),
    read(() => handle.prepare('select v from t where k = 2').pluck(true).get()),
  ]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.deepEqual([results[0], results[2]].map((r) => r?.status === 'fulfilled' && r.value), ['one', 'two']);
  assert.match(String((results[1] as PromiseRejectedResult).reason), /no such table/);
});

it('a write between turns is seen by the next turn', async () => {
  const read = sqliteTurnReads(handle);
  const select = handle.prepare('select v from t where k = ?').pluck(true);
  const before = await Promise.all([read(() => select.get(1)), read(() => select.get(1))]);
  handle.prepare('update t set v = ? where k = 1').run('uno');
  const afterWrite = await Promise.all([read(() => select.get(1)), read(() => select.get(1))]);
  assert.deepEqual([before, afterWrite], [['one', 'one'], ['uno', 'uno']]);
});
