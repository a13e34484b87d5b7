/**
 * Prepared Kysely queries (db/prepared-query.ts): compiled once, each call's arguments bound in
 * their own places — on both dialects, inside and outside transactions — and a query whose shape
 * would depend on its arguments refused on first use.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Kysely } from 'kysely';
import { preparedQuery } from '../../src/db/prepared-query.js';
import type { Database } from '../../src/db/schema.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';

type Q = Kysely<Database>;

const insertUser = preparedQuery((db: Q, id: string, email: string, name: string, createdAt: number, updatedAt: number) =>
  db.insertInto('users').values({ id, email, password_hash: 'not-a-hash', display_name: name, stride_length_cm: null, created_at: createdAt, updated_at: updatedAt }),
);

// The arguments come in another order than their places in the SQL.
const namesCreatedBetween = preparedQuery((db: Q, until: number, from: number) =>
  db.selectFrom('users').select(['display_name', 'updated_at']).where('created_at', '>=', from).where('created_at', '<', until).orderBy('created_at'),
);

const rename = preparedQuery((db: Q, id: string, name: string) => db.updateTable('users').set({ display_name: name }).where('id', '=', id));

forEachDialect('prepared queries', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect);
    const db = database.db.kysely;
    await insertUser(db, 'u1', 'one@example.test', 'One', 100, 101);
    await insertUser(db, 'u2', 'two@example.test', 'Two', 200, 201);
    await insertUser(db, 'u3', 'three@example.test', 'Three', 300, 301);
  });
  after(() => database.drop());

  it('binds every call’s arguments in their own places, and constants stay as built', async () => {
    const db = database.db.kysely;
    assert.deepEqual((await namesCreatedBetween(db, 300, 100)).rows, [
      { display_name: 'One', updated_at: 101 },
      { display_name: 'Two', updated_at: 201 },
    ]);
    assert.deepEqual((await namesCreatedBetween(db, 1000, 250)).rows, [{ display_name: 'Three', updated_at: 301 }]);
    assert.deepEqual((await namesCreatedBetween(db, 100, 0)).rows, []);
  });

  it('reports the rows an update changed, and runs inside a transaction that can roll it back', async () => {
    const db = database.db.kysely;
    assert.equal(Number((await rename(db, 'u2', 'Deux')).numAffectedRows), 1);
    assert.equal(Number((await rename(db, 'nobody', 'X')).numAffectedRows), 0);
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await rename(trx, 'u3', 'Drei');
        assert.equal((await namesCreatedBetween(trx, 301, 300)).rows[0]?.display_name, 'Drei', 'the transaction sees its own change');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual((await namesCreatedBetween(db, 1000, 200)).rows.map((row) => row.display_name), ['Deux', 'Three']);
  });

  it('refuses a query that reads an argument instead of binding it, or binds one twice', async () => {
    const db = database.db.kysely;
    const lowered = preparedQuery((q: Q, email: string) => q.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()));
    await assert.rejects(async () => lowered(db, 'ONE@example.test'), /bind each argument exactly once; argument 0 is bound 0 times/);
    const computed = preparedQuery((q: Q, at: number) => q.selectFrom('users').selectAll().where('created_at', '>=', at).where('updated_at', '>=', at + 1));
    await assert.rejects(async () => computed(db, 0), /bind its arguments as they are/);
    const twice = preparedQuery((q: Q, at: number) => q.selectFrom('users').selectAll().where('created_at', '>=', at).where('updated_at', '>=', at));
    await assert.rejects(async () => twice(db, 0), /argument 0 is bound 2 times/);
  });
});
