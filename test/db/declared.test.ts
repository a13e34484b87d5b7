/**
 * Statements declared once and run by each dialect's executor (src/db/declared.ts): a read answers
 * each call with its own row, and only with committed rows; a claim answers true once per key, a
 * repeat in the same turn included. On PostgreSQL the reads of one turn are one execution of one
 * statement, reads declared on one statement share it, and calls with the same parameters share
 * its rows; the claims of one turn are one execution too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/db/database.js';
import { declareClaim, declareRead, turnStatement } from '../../src/db/declared.js';
import { createTestDatabase, forEachDialect, POSTGRES_URL, postgresUnavailable, type TestDatabase } from '../support/databases.js';

const VALUE_AT = declareRead<[k: string, notBefore: number], string>({
  sqlite: 'select v, at from declared_kv where k = ? and at >= ?',
  postgres: turnStatement({
    name: 'stride_test_declared_value',
    parameters: { k: 'text', not_before: 'bigint' },
    text: (input) => `select x.v, x.at, input.n from ${input}
      cross join lateral (select * from declared_kv x where x.k = input.k and x.at >= input.not_before limit 1) x`,
  }),
  decode: (values) => `${values[0] as string}@${values[1] as number}`,
});

/** Two reads of two tables, one statement on PostgreSQL. */
const BOTH = turnStatement({
  name: 'stride_test_declared_both',
  parameters: { k: 'text', label: 'text' },
  text: (input) => `select row_to_json(a), row_to_json(b), input.n from ${input}
    left join lateral (select * from declared_kv x where x.k = input.k limit 1) a on true
    left join lateral (select * from declared_labels y where y.label = input.label limit 1) b on true`,
});
const KV_ROW = declareRead<[k: string], string, { v: string }>({
  sqlite: 'select * from declared_kv where k = ?',
  rows: 'object',
  postgres: BOTH,
  parameters: ['k'],
  column: 0,
  decode: (row) => row.v,
});
const LABEL_ROW = declareRead<[label: string], number, { label: string; weight: number }>({
  sqlite: 'select * from declared_labels where label = ?',
  rows: 'object',
  postgres: BOTH,
  parameters: ['label'],
  column: 1,
  decode: (row) => row.weight,
});

const INSERT_ONCE = declareClaim<readonly [k: string, v: string]>({
  sqlite: 'insert into declared_kv (k, v, at) values (?, ?, 0) on conflict (k) do nothing',
  postgres: turnStatement({
    name: 'stride_test_declared_insert',
    parameters: { k: 'text', v: 'text' },
    text: (input) => `insert into declared_kv (k, v, at) select k, v, 0 from ${input} on conflict (k) do nothing returning k`,
  }),
  values: (input) => input,
});

async function createTables(db: Db): Promise<void> {
  await sql`create table declared_kv (k text primary key, v text not null, at bigint not null)`.execute(db.kysely);
  await sql`create table declared_labels (label text primary key, weight integer not null)`.execute(db.kysely);
  await sql`insert into declared_kv (k, v, at) values ('a', 'one', 10), ('b', 'two', 20)`.execute(db.kysely);
  await sql`insert into declared_labels (label, weight) values ('heavy', 9)`.execute(db.kysely);
}

forEachDialect('declared statements', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
    await createTables(database.db);
  });
  after(() => database.drop());

  it('answers each read of a turn with its own row, or undefined', async () => {
    const value = database.db.executor.reader(VALUE_AT);
    assert.deepEqual(
      await Promise.all([value('a', 0), value('b', 0), value('a', 0), value('a', 11), value('missing', 0), value('b', 20)]),
      ['one@10', 'two@20', 'one@10', undefined, undefined, 'two@20'],
    );
  });

  it('answers reads of several tables declared on one statement, each from its own', async () => {
    const kv = database.db.executor.reader(KV_ROW);
    const label = database.db.executor.reader(LABEL_ROW);
    assert.deepEqual(await Promise.all([kv('a'), label('heavy'), kv('heavy'), label('a'), kv('b'), label('light')]), ['one', 9, undefined, undefined, 'two', undefined]);
  });

  it('answers with committed rows only, while a transaction writing them is open', async () => {
    const value = database.db.executor.reader(VALUE_AT);
    await database.db.kysely.transaction().execute(async (trx) => {
      await sql`insert into declared_kv (k, v, at) values ('pending', 'uncommitted', 0)`.execute(trx);
      // On a SQLite file (a read connection of its own) and on PostgreSQL (another pooled
      // connection) the read does not wait for this transaction to end.
      assert.equal(await value('pending', 0), undefined);
    });
    assert.equal(await value('pending', 0), 'uncommitted@0');
  });

  it('claims each key once, a key repeated in the same turn included', async () => {
    const insert = database.db.executor.claimer(INSERT_ONCE);
    assert.deepEqual(
      await Promise.all([insert(['c', 'first']), insert(['d', 'first']), insert(['c', 'second']), insert(['a', 'again']), insert(['c', 'third'])]),
      [true, true, false, false, false],
    );
    const rows = await sql<{ k: string; v: string }>`select k, v from declared_kv where k in ('a', 'c', 'd') order by k`.execute(database.db.kysely);
    assert.deepEqual(rows.rows.map((row) => ({ ...row })), [{ k: 'a', v: 'one' }, { k: 'c', v: 'first' }, { k: 'd', v: 'first' }]);
  });
});

describe('declared statements, by the turn, on PostgreSQL', { skip: postgresUnavailable() ?? false }, () => {
  let database: TestDatabase;
  // One connection, so that pg_prepared_statements (which shows the session's own) sees them all.
  let db: Db;
  before(async () => {
    database = await createTestDatabase('postgres', { migrate: false });
    await createTables(database.db);
    db = openDatabase(POSTGRES_URL!, { schema: database.schema!, poolSize: 1 });
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  const executions = async (name: string): Promise<number> => {
    const { rows } = await db.pool!.query<{ runs: number }>('select (generic_plans + custom_plans)::int as runs from pg_prepared_statements where name = $1', [name]);
    return rows[0]?.runs ?? 0;
  };

  it('runs the reads of one turn as one statement, each answered with its own rows', async () => {
    const value = db.executor.reader(VALUE_AT);
    const keys = ['a', 'b', 'missing', 'a', 'b'];
    assert.deepEqual(await Promise.all(keys.map((k) => value(k, 0))), ['one@10', 'two@20', undefined, 'one@10', 'two@20']);
    assert.equal(await executions('stride_test_declared_value'), 1);
    assert.deepEqual(await Promise.all([value('a', 10), value('a', 11)]), ['one@10', undefined]);
    assert.equal(await executions('stride_test_declared_value'), 2);
  });

  it('runs the reads declared on one statement together', async () => {
    const kv = db.executor.reader(KV_ROW);
    const label = db.executor.reader(LABEL_ROW);
    assert.deepEqual(await Promise.all([kv('a'), label('heavy'), kv('b')]), ['one', 9, 'two']);
    assert.equal(await executions('stride_test_declared_both'), 1);
  });

  it('runs the claims of one turn as one statement, and a repeated key after it', async () => {
    const insert = db.executor.claimer(INSERT_ONCE);
    assert.deepEqual(await Promise.all([insert(['e', '1']), insert(['f', '1']), insert(['g', '1'])]), [true, true, true]);
    assert.equal(await executions('stride_test_declared_insert'), 1);
    assert.deepEqual(await Promise.all([insert(['h', '1']), insert(['h', '2'])]), [true, false]);
    assert.equal(await executions('stride_test_declared_insert'), 3);
  });
});
