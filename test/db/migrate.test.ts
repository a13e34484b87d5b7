import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { MIGRATIONS, migrateToLatest } from '../../src/db/migrate.js';
import { runCli, runCliInProcess } from '../support/cli.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';

const TABLES = [
  'users', 'apps', 'grants', 'authorization_codes', 'access_tokens', 'refresh_tokens',
  'sessions', 'series_days', 'sleep_sessions', 'body_weights', 'server_secrets',
];

forEachDialect('migrations', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('are applied by several processes starting at once, exactly once', async () => {
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runCli(['migrate', '--json'], { DATABASE_URL: database.url })),
    );
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const applied = runs.flatMap((run) => JSON.parse(run.stdout).applied as string[]);
    assert.deepEqual(applied.sort(), Object.keys(MIGRATIONS).sort(), 'each migration applied by exactly one process');
  });

  it('create every table of the data model', async () => {
    for (const table of TABLES) {
      // Counting rows succeeds only if the table exists in this database's own schema.
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(database.db.kysely);
      // One secret is made with the tables: the key of the events' ids (migration 022).
      assert.equal(Number(rows[0]!.n), table === 'server_secrets' ? 1 : 0, table);
    }
  });

  it('do nothing when the schema is up to date', async () => {
    assert.deepEqual(await migrateToLatest(database.db), []);
    const run = await runCliInProcess(['migrate'], { DATABASE_URL: database.url });
    assert.equal(run.code, 0);
    assert.equal(run.stdout.trim(), 'the schema is up to date');
  });

  it('refuse a database migrated by a newer version', async () => {
    await sql`insert into stride_migrations (name, applied_at) values ('999_future', 0)`.execute(database.db.kysely);
    try {
      await assert.rejects(migrateToLatest(database.db), /migration 999_future, which this version of Stride does not know/);
      const run = await runCliInProcess(['migrate'], { DATABASE_URL: database.url });
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^stride: the database has migration 999_future/);
    } finally {
      await sql`delete from stride_migrations where name = '999_future'`.execute(database.db.kysely);
    }
  });

  it('enforce the uniqueness and cascades the code relies on', async () => {
    const { kysely } = database.db;
    const user = { id: 'u1', email: 'a@example.com', password_hash: 'x', display_name: 'A', stride_length_cm: null, created_at: 1, updated_at: 1 };
    await kysely.insertInto('users').values(user).execute();
    await assert.rejects(kysely.insertInto('users').values({ ...user, id: 'u2' }).execute(), 'email is unique');
    await kysely.insertInto('apps').values({
      id: 'a1', client_id: 'c1', client_secret_hash: null, owner_id: 'u1', name: 'A', redirect_uris: '[]',
      scopes: 'read_profile', is_public: 1, created_at: 1, updated_at: 1,
    }).execute();
    await kysely.insertInto('grants').values({ id: 'g1', user_id: 'u1', app_id: 'a1', scope: 'read_profile', created_at: 1, updated_at: 1, last_used_at: null }).execute();
    await kysely.insertInto('access_tokens').values({
      token_key: 'h1', family_id: 'f1', grant_id: 'g1', app_id: 'a1', user_id: 'u1', scope: 'read_profile', expires_at: 9, created_at: 1,
    }).execute();
    await kysely.deleteFrom('apps').where('id', '=', 'a1').execute();
    const left = await sql<{ n: number }>`select count(*) as n from access_tokens`.execute(kysely);
    assert.equal(Number(left.rows[0]!.n), 0, 'deleting an app deletes its tokens');
  });
});
