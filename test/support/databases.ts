/**
 * Test databases: every storage test runs on SQLite, and also on PostgreSQL when
 * TEST_DATABASE_URL is set (in CI, where it must be, its absence fails the file). Each test gets a
 * clean database: a new SQLite file, or a new PostgreSQL schema that is dropped afterwards.
 *
 * A migrated one is a copy of a template that migrateToLatest made (see migratedCopy below).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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
  const migrate = options.migrate !== false;
  let result: TestDatabase;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'stride-test-'));
    const file = join(dir, 'stride.sqlite');
    if (migrate) copyFileSync(await migratedSqliteTemplate(), file);
    const url = `sqlite:${file}`;
    const db = openDatabase(url);
    if (migrate) await db.kysely.updateTable('server_secrets').set({ value: newEventIdsKey() }).where('name', '=', 'event_ids').execute();
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
    const script = migrate ? await migratedPostgresScript() : null;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    // The script creates the schema with everything in it: one statement list, one transaction.
    await admin.query(
      script === null
        ? `create schema ${schema}`
        : `${script.replaceAll(SCHEMA_MARK, schema)};\nupdate ${schema}.server_secrets set value = '${newEventIdsKey()}' where name = 'event_ids'`,
    );
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
    if (script === null && migrate) await migrateToLatest(result.db);
  }
  return result;
}

/**
 * Why test databases are copies: migrating one (23 migrations, some rebuilding tables) cost more
 * CPU than most of the tests run on it, and the suite makes hundreds. The template is made by
 * migrateToLatest itself, so a copy holds what migrating gives; test/support/databases.test.ts
 * compares the two. The tests of the migrations themselves ask for an unmigrated database
 * (`migrate: false`) and migrate it.
 *
 * SQLite: a file migrated once per process, copied for each database.
 */
let sqliteTemplate: Promise<string> | undefined;

function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stride-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'stride.sqlite');
    const db = openDatabase(`sqlite:${file}`);
    try {
      await migrateToLatest(db);
      // Everything in the one file (no -wal beside it), as a new file starts before openDatabase sets WAL.
      db.sqlite!.pragma('journal_mode = DELETE');
    } finally {
      await db.close();
    }
    return file;
  })();
  return sqliteTemplate;
}

/**
 * PostgreSQL: a schema migrated once, written out by pg_dump as the statements that make it again
 * (its name replaced by SCHEMA_MARK), and run for each database in one round trip. Schemas cannot
 * be copied inside the server, and a database per test (CREATE DATABASE … TEMPLATE) copies the
 * whole catalog each time. The script is kept in the temporary folder under a digest of the
 * compiled database code and the server's URL, so the processes of a run make it once; without
 * pg_dump (or with one older than the server), each database is migrated as before.
 */
const SCHEMA_MARK = '__stride_test_schema__';
let postgresScript: Promise<string | null> | undefined;

function migratedPostgresScript(): Promise<string | null> {
  postgresScript ??= (async () => {
    const kept = join(tmpdir(), `stride-test-schema-${databaseCodeDigest()}.sql`);
    if (existsSync(kept)) return readFileSync(kept, 'utf8');
    const schema = `t_template_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(`create schema ${schema}`);
      const db = openDatabase(POSTGRES_URL!, { schema, poolSize: 1 });
      try {
        await migrateToLatest(db);
      } finally {
        await db.close();
      }
      let dump: string;
      try {
        ({ stdout: dump } = await promisify(execFile)('pg_dump', ['--dbname', POSTGRES_URL!, '--schema', schema, '--no-owner', '--no-privileges', '--inserts'], { maxBuffer: 64 << 20 }));
      } catch {
        return null;
      }
      // Lines of psql's own commands (`\restrict`, in the pg_dump of late 2025 on) are for psql alone.
      const script = dump.replace(/^\\.*$/gm, '').replaceAll(schema, SCHEMA_MARK);
      const partial = `${kept}.${process.pid}`;
      writeFileSync(partial, script);
      renameSync(partial, kept);
      return script;
    } finally {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  })();
  return postgresScript;
}

/** A digest of the compiled database code (dist/src/db: the migrations and what they use) and of TEST_DATABASE_URL. */
function databaseCodeDigest(): string {
  const hash = createHash('sha256').update(POSTGRES_URL ?? '');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js')) hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(fileURLToPath(new URL('../../src/db/', import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The key of event ids (store/event-ids.ts), which migration 022 makes for each database: a copy
 * gets one of its own, as a migrated database has.
 */
function newEventIdsKey(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Declares the suite on SQLite alone, for a protocol test in which the database plays no part:
 * what its stores do is tested on both dialects elsewhere (test/store, test/db, and a file of
 * processes on each database where rows are shared). The body is the same as forEachDialect's.
 */
export function onOneDialect(name: string, body: (dialect: Dialect) => void): void {
  describe(`${name} [sqlite]`, () => body('sqlite'));
}

/**
 * Inside forEachDialect: `it` (or `describe`) on SQLite, nothing on PostgreSQL — for the tests of a
 * suite in which the database plays no part (what a client library sends, how a request is
 * validated), beside those of the same suite that depend on what the database keeps (a value
 * claimed once, a row that expires): `const protocolOnly = onSqliteAlone(dialect, it)`.
 */
export function onSqliteAlone<Declare extends typeof it | typeof describe>(dialect: Dialect, declare: Declare): Declare {
  return dialect === 'sqlite' ? declare : ((() => undefined) as unknown as Declare);
}

/** Declares the suite once per dialect: `forEachDialect('tokens', (dialect) => { it(…) })`. */
export function forEachDialect(name: string, body: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) {
    describe(`${name} [${dialect}]`, () => body(dialect));
  }
}
