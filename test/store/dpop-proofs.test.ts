/**
 * The record of DPoP proofs seen (store/dpop-proofs.ts, RFC 9449 §11.1), on both dialects: the
 * proofs recorded in one turn go to the database together, and still each key is recorded once —
 * within one group, across groups, and across two connections to one database (as two processes).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { createStores, type Stores } from '../../src/store/stores.js';
import { forEachDialect, type TestDatabase, createTestDatabase } from '../support/databases.js';

forEachDialect('DPoP proofs seen', (dialect) => {
  let database: TestDatabase;
  let stores: Stores;

  before(async () => {
    database = await createTestDatabase(dialect);
    stores = database.stores;
  });
  after(() => database.drop());

  const remember = (key: string, s = stores) => s.dpopProofs.remember(key, 2_000_000_000);

  it('records each key once when keys come together, a key twice among them', async () => {
    const keys = Array.from({ length: 20 }, () => randomUUID());
    const answers = await Promise.all([...keys, keys[3]!, keys[7]!, keys[3]!].map((key) => remember(key)));
    assert.deepEqual(answers, [...keys.map(() => true), false, false, false]);
    // Each key once more, in a later group: all replays.
    assert.deepEqual(await Promise.all(keys.map((key) => remember(key))), keys.map(() => false));
    const rows = await database.db.kysely.selectFrom('dpop_proofs').select('proof_key').where('proof_key', 'in', keys).execute();
    assert.equal(rows.length, keys.length);
  });

  it('records a key once when two connections to the database are given it at once', async () => {
    const other = openDatabase(database.url);
    try {
      const otherStores = createStores(other);
      const keys = Array.from({ length: 50 }, () => randomUUID());
      const [mine, theirs] = await Promise.all([Promise.all(keys.map((key) => remember(key))), Promise.all(keys.map((key) => remember(key, otherStores)))]);
      keys.forEach((key, i) => assert.equal(Number(mine[i]) + Number(theirs[i]), 1, key));
    } finally {
      await other.close();
    }
  });

  // Registered on SQLite only (not skipped elsewhere): PostgreSQL has no handle shared with a transaction.
  if (dialect === 'sqlite') it('keeps the record when a transaction is open on the SQLite handle, by waiting for it', async () => {
    const key = randomUUID();
    let answer: Promise<boolean> | undefined;
    await database.db.kysely.transaction().execute(async (trx) => {
      await trx.selectFrom('dpop_proofs').select('proof_key').limit(1).execute();
      answer = remember(key);
      // The insert waits for this transaction; it is not part of it.
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal((await trx.selectFrom('dpop_proofs').select('proof_key').where('proof_key', '=', key).execute()).length, 0);
    });
    assert.equal(await answer, true);
    assert.equal(await remember(key), false);
  });
});
