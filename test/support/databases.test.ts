/**
 * A migrated test database is a copy of a template (databases.ts): it must hold what migrating a
 * fresh one gives — the same tables, columns, keys, indexes and partitions, the same migrations
 * recorded and secrets made — and a key of event ids of its own, as each migrated database has.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import type { Db, Dialect } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from './databases.js';

/** What the database holds: its objects' definitions, the migrations recorded and the secrets made. */
async function describeSchema(db: Db, dialect: Dialect): Promise<unknown> {
  const rows = async (query: ReturnType<typeof sql>) => (await query.execute(db.kysely)).rows;
  const contents = {
    migrations: await rows(sql`select name from stride_migrations order by name`),
    secrets: await rows(sql`select name from server_secrets order by name`),
  };
  if (dialect === 'sqlite') {
    return { ...contents, objects: await rows(sql`select type, name, tbl_name, sql from sqlite_master order by type, name`) };
  }
  const [{ schema }] = (await rows(sql`select current_schema() as schema`)) as [{ schema: string }];
  const described = {
    ...contents,
    columns: await rows(sql`
      select table_name, column_name, ordinal_position, data_type, column_default, is_nullable, is_identity
      from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`),
    constraints: await rows(sql`
      select c.conrelid::regclass::text as table, c.conname, pg_get_constraintdef(c.oid) as definition
      from pg_constraint c join pg_namespace n on n.oid = c.connamespace
      where n.nspname = current_schema() order by 1, 2`),
    indexes: await rows(sql`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() order by 1, 2`),
    partitions: await rows(sql`
      select i.inhparent::regclass::text as parent, i.inhrelid::regclass::text as partition, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() order by 1, 2`),
    sequences: await rows(sql`
      select sequencename, data_type, start_value, increment_by, last_value from pg_sequences
      where schemaname = current_schema() order by 1`),
  };
  // Each database's schema has a name of its own; what it holds is compared without it.
  return JSON.parse(JSON.stringify(described).replaceAll(schema, '<schema>'));
}

async function eventIdsKey(db: Db): Promise<string> {
  const row = await db.kysely.selectFrom('server_secrets').select('value').where('name', '=', 'event_ids').executeTakeFirstOrThrow();
  return row.value;
}

forEachDialect('a test database', (dialect) => {
  const databases: TestDatabase[] = [];
  let migrated: TestDatabase;
  before(async () => {
    migrated = await createTestDatabase(dialect, { migrate: false });
    databases.push(migrated);
    await migrateToLatest(migrated.db);
  });
  after(async () => {
    for (const database of databases) await database.drop();
  });

  it('holds what migrating a fresh database gives, with a key of event ids of its own', async () => {
    const copies = [await createTestDatabase(dialect), await createTestDatabase(dialect)];
    databases.push(...copies);
    const expected = await describeSchema(migrated.db, dialect);
    for (const copy of copies) assert.deepEqual(await describeSchema(copy.db, dialect), expected);
    assert.equal(new Set(await Promise.all([migrated, ...copies].map((database) => eventIdsKey(database.db)))).size, 3);
    // Nothing to apply: the copy is at the latest migration.
    assert.deepEqual(await migrateToLatest(copies[0]!.db), []);
  });

  it('keeps its rows to itself', async () => {
    const [first, second] = [await createTestDatabase(dialect), await createTestDatabase(dialect)];
    databases.push(first!, second!);
    await first!.db.kysely.insertInto('server_secrets').values({ name: 'dpop_nonce', value: 'x', created_at: 0 }).execute();
    const names = async (database: TestDatabase) => (await database.db.kysely.selectFrom('server_secrets').select('name').execute()).map((row) => row.name).sort();
    assert.deepEqual(await names(first!), ['dpop_nonce', 'event_ids']);
    assert.deepEqual(await names(second!), ['event_ids']);
  });
});
