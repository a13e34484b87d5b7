/**
 * The SQLite executor (src/db/sqlite-executor.ts): reads of one turn together, each caller with its
 * own answer or error; reads that answer the committed state while a write transaction is open
 * (a file: a read connection of its own; `:memory:`: the write connection's turn); writes that wait
 * for an open transaction instead of joining it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/db/database.js';
import type { SqliteExecutor } from '../../src/db/executor.js';

const SELECT = 'select v from t where k = ?';

async function openWithTable(url: string): Promise<{ db: Db; executor: SqliteExecutor }> {
  const db = openDatabase(url);
  assert.ok(db.dialect === 'sqlite');
  await sql`create table t (k integer primary key, v text)`.execute(db.kysely);
  await sql`insert into t values (1, 'one'), (2, 'two')`.execute(db.kysely);
  return { db, executor: db.executor };
}

const readValue = (executor: SqliteExecutor, k: number) => executor.read((c) => c.statement<string>(SELECT, 'pluck').get(k));

describe('on a file', () => {
  let dir: string;
  let db: Db;
  let executor: SqliteExecutor;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stride-executor-'));
    ({ db, executor } = await openWithTable(`sqlite:${join(dir, 'reads.sqlite')}`));
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a read connection of its own, which refuses writes', async () => {
    assert.equal(executor.readsApart, true);
    await assert.rejects(
      executor.read((c) => c.statement("update t set v = 'x' where k = 1").run()),
      /readonly|read-only|query_only/i,
    );
    assert.equal(await readValue(executor, 1), 'one');
  });

  it('reads of one turn are each answered with their own result, and one that throws fails only its caller', async () => {
    assert.deepEqual(await Promise.all([1, 2, 3].map((k) => readValue(executor, k))), ['one', 'two', undefined]);
    const results = await Promise.allSettled([readValue(executor, 1), executor.read((c) => c.statement('select v from no_such_table').get()), readValue(executor, 2)]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual([results[0], results[2]].map((r) => r?.status === 'fulfilled' && r.value), ['one', 'two']);
  });

  it('a read issued while a write transaction is open answers the committed state, at once', async () => {
    let during: unknown;
    await db.kysely.transaction().execute(async (trx) => {
      await sql`update t set v = 'uncommitted' where k = 1`.execute(trx);
      // The transaction stays open across turns while the read is answered.
      during = await readValue(executor, 1);
      await sql`update t set v = 'uno' where k = 1`.execute(trx);
    });
    assert.equal(during, 'one', 'not the open transaction’s row');
    assert.equal(await readValue(executor, 1), 'uno', 'the commit is seen by the next read');
  });

  it('a write waits for an open transaction instead of joining it, and outlives its rollback', async () => {
    class Rollback extends Error {}
    let written: Promise<unknown> | undefined;
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await sql`update t set v = 'rolled back' where k = 2`.execute(trx);
        written = executor.write((c) => c.statement("insert into t values (3, 'three')").run());
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Rollback();
      }),
      Rollback,
    );
    await written;
    assert.deepEqual(await Promise.all([2, 3].map((k) => readValue(executor, k))), ['two', 'three']);
  });
});

describe('on :memory:', () => {
  let db: Db;
  let executor: SqliteExecutor;
  before(async () => ({ db, executor } = await openWithTable('sqlite::memory:')));
  after(() => db.close());

  it('a read issued while a write transaction is open waits for its end and answers the committed state', async () => {
    assert.equal(executor.readsApart, false);
    class Rollback extends Error {}
    let during: Promise<unknown> | undefined;
    let bodyDone = false;
    let ranAfterBody: boolean | undefined;
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await sql`update t set v = 'uncommitted' where k = 1`.execute(trx);
        during = executor.read((c) => ((ranAfterBody = bodyDone), c.statement<string>(SELECT, 'pluck').get(1)));
        await new Promise((resolve) => setTimeout(resolve, 20));
        bodyDone = true;
        throw new Rollback();
      }),
      Rollback,
    );
    assert.equal(await during, 'one');
    assert.equal(ranAfterBody, true, 'the read waited for the transaction');
  });
});
