/**
 * Closing a PostgreSQL database (db/database.ts) ends its pool whichever way it was used: through
 * Kysely, or only through the statements the hot paths send to the pool directly. A pool left open
 * keeps its idle connections, and the process, alive until its idle timeout.
 *
 * The statements the hot paths prepare by name are planned once per connection, not at every
 * execution: PostgreSQL's default would plan a statement over an array parameter each time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { POSTGRES_URL, postgresUnavailable } from '../support/databases.js';

describe('closing a PostgreSQL database', { skip: postgresUnavailable() ?? false }, () => {
  it('ends the pool when only statements sent to the pool directly ran on it', async () => {
    const db = openDatabase(POSTGRES_URL!);
    await db.pool!.query('select 1');
    assert.equal(db.pool!.totalCount, 1);
    await db.close();
    assert.equal(db.pool!.ended, true);
    assert.equal(db.pool!.totalCount, 0, 'no connection is left open');
  });

  it('ends the pool once when Kysely ran a query on it too', async () => {
    const db = openDatabase(POSTGRES_URL!);
    await sql`select 1`.execute(db.kysely);
    await db.pool!.query('select 1');
    await db.close();
    assert.equal(db.pool!.ended, true);
    assert.equal(db.pool!.totalCount, 0);
  });
});

describe('statements prepared by name on PostgreSQL', { skip: postgresUnavailable() ?? false }, () => {
  const text = 'select k.key from unnest($1::text[]) as k(key) where k.key > $2';
  const plans = async (client: import('pg').PoolClient) => {
    for (let i = 0; i < 8; i++) await client.query({ name: 'stride_test_unnest', text, values: [['a', 'b'], ''] });
    const { rows } = await client.query('select generic_plans::int, custom_plans::int from pg_prepared_statements where name = $1', ['stride_test_unnest']);
    return rows[0] as { generic_plans: number; custom_plans: number };
  };

  it('are planned once for every execution on each pooled connection', async () => {
    const db = openDatabase(POSTGRES_URL!);
    try {
      const client = await db.pool!.connect();
      try {
        assert.deepEqual(await plans(client), { generic_plans: 8, custom_plans: 0 });
      } finally {
        client.release();
      }
    } finally {
      await db.close();
    }
  });

  it('keep the server\'s default behind a transaction-pooling proxy, where nothing is prepared by name', async () => {
    const db = openDatabase(POSTGRES_URL!, { transactionPooling: true });
    try {
      const client = await db.pool!.connect();
      try {
        assert.equal((await client.query('show plan_cache_mode')).rows[0].plan_cache_mode, 'auto');
      } finally {
        client.release();
      }
    } finally {
      await db.close();
    }
  });
});
