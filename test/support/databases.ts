/**
 * Test databases: every storage test runs on SQLite, and also on PostgreSQL when
 * TEST_DATABASE_URL is set (in CI, where it must be, its absence fails the file). Each test gets a
 * clean database: a new SQLite file, or a new PostgreSQL schema that is dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import { openDatabase, type Db, type Dialect } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createStores, type Stores } from '../../src/store/stores.js';
import { missing } from './dependencies.js';

export const POSTGRES_URL = process.env.TEST_DATABASE_URL || undefined;

/** Why the tests cannot use PostgreSQL (TEST_DATABASE_URL is not set), or null; in CI, thrown. */
export function postgresUnavailable(): string | null {
  return POSTGRES_URL ? null : missing('TEST_DATABASE_URL is not set: the tests run on SQLite only');
}

const noPostgres = postgresUnavailable();
if (noPostgres) console.log(`# ${noPostgres}`);

export const DIALECTS: Dialect[] = noPostgres ? ['sqlite'] : ['sqlite', 'postgres'];

export interface TestDatabase {
  db: Db;
  /** The stores of `db`, as the server makes them. */
  stores: Stores;
  /** A DATABASE_URL another process (the CLI, a second server) can use to reach the same data. */
  url: string;
  /** For PostgreSQL: the schema to put on search_path. */
  schema?: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: Dialect, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  let result: TestDatabase;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'stride-test-'));
    const url = `sqlite:${join(dir, 'stride.sqlite')}`;
    const db = openDatabase(url);
    result = {
      db,
      stores: createStores(db),
      url,
      drop: async () => {
        await db.close().catch(() => undefined); // a test may have closed it already
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } else {
    if (!POSTGRES_URL) throw new Error('TEST_DATABASE_URL is not set');
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const db = openDatabase(POSTGRES_URL, { schema, poolSize: 4 });
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    result = {
      db,
      stores: createStores(db),
      url: url.toString(),
      schema,
      drop: async () => {
        await db.close().catch(() => undefined); // a test may have closed it already
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        await client.query(`drop schema ${schema} cascade`);
        await client.end();
      },
    };
  }
  if (options.migrate !== false) await migrateToLatest(result.db);
  return result;
}

/**
 * Declares the suite on SQLite alone, for a protocol test in which the database plays no part:
 * what its stores do is tested on both dialects elsewhere (test/store, test/db, and a file of
 * processes on each database where rows are shared). The body is the same as forEachDialect's.
 */
export function onOneDialect(name: string, body: (dialect: Dialect) => void): void {
  describe(`${name} [sqlite]`, () => body('sqlite'));
}

/** Declares the suite once per dialect: `forEachDialect('tokens', (dialect) => { it(…) })`. */
export function forEachDialect(name: string, body: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) {
    describe(`${name} [${dialect}]`, () => body(dialect));
  }
}
