/**
 * Opening and closing a database (db/database.ts). Closing a PostgreSQL database ends its pool
 * whichever way it was used: through Kysely, or only through the statements the hot paths send to
 * the pool directly. A pool left open keeps its idle connections, and the process, alive until its
 * idle timeout.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('a SQLite database file', () => {
  it('makes the folder it is in readable by the server alone, and leaves a folder that exists as it is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stride-folder-'));
    try {
      const made = openDatabase(`sqlite:${join(dir, 'data', 'stride.sqlite')}`);
      await made.close();
      assert.equal(statSync(join(dir, 'data')).mode & 0o777, 0o700);
      mkdirSync(join(dir, 'shared'), { mode: 0o750 });
      const existing = openDatabase(`sqlite:${join(dir, 'shared', 'stride.sqlite')}`);
      await existing.close();
      assert.equal(statSync(join(dir, 'shared')).mode & 0o777, 0o750 & ~process.umask());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
