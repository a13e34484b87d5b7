/**
 * Closing a PostgreSQL database (db/database.ts) ends its pool whichever way it was used: through
 * Kysely, or only through the statements the hot paths send to the pool directly. A pool left open
 * keeps its idle connections, and the process, alive until its idle timeout.
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
