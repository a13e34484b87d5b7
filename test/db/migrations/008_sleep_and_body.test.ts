/**
 * Migration 008_sleep_and_body on a database at 007 with people and their steps: the two tables
 * appear, empty; the steps are untouched; a person's key holds one session per start and one
 * measurement per time; and deleting a person deletes their sessions and measurements.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Kysely } from 'kysely';
import { MIGRATIONS, migrateToLatest } from '../../../src/db/migrate.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../../support/databases.js';

forEachDialect('migration 008_sleep_and_body', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('adds the sleep and weight tables beside the data of 007, keyed by person and time, deleted with the person', async () => {
    const db = database.db.kysely as Kysely<any>;
    const earlier = Object.keys(MIGRATIONS).sort().filter((name) => name < '008');
    for (const name of earlier) await MIGRATIONS[name]!.up(db);
    await db.schema.createTable('stride_migrations').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
    for (const name of earlier) await db.insertInto('stride_migrations').values({ name, applied_at: 0 }).execute();
    for (const id of ['a', 'b']) {
      await db.insertInto('users').values({ id, email: `${id}@example.com`, password_hash: 'x', display_name: id, stride_length_cm: null, created_at: 1, updated_at: 1 }).execute();
      await db.insertInto('series_days').values({ user_id: id, metric: 'steps', day_start: 86_400, total: 3, hours: Buffer.from([3]), minutes: Buffer.from([0, 1, 3]) }).execute();
    }

    assert.deepEqual(await migrateToLatest(database.db), Object.keys(MIGRATIONS).sort().filter((name) => name >= '008'));
    assert.equal((await db.selectFrom('series_days').selectAll().where('metric', '=', 'steps').execute()).length, 2, 'the steps are kept');
    assert.deepEqual(await db.selectFrom('sleep_sessions').selectAll().execute(), []);
    assert.deepEqual(await db.selectFrom('body_weights').selectAll().execute(), []);

    const session = { start_time: 1000, end_time: 4600, id_tag: 7, stages: Buffer.from([60, 0xf0, 0x03]) };
    const weight = { time: 1000, id_tag: 9, kg_hundredths: 7015, fat_hundredths: null };
    for (const user_id of ['a', 'b']) {
      await db.insertInto('sleep_sessions').values({ user_id, ...session }).execute();
      await db.insertInto('body_weights').values({ user_id, ...weight }).execute();
    }
    await assert.rejects(db.insertInto('sleep_sessions').values({ user_id: 'a', ...session, id_tag: 8 }).execute(), 'one session per person and start');
    await assert.rejects(db.insertInto('body_weights').values({ user_id: 'a', ...weight, id_tag: 8 }).execute(), 'one measurement per person and time');
    await assert.rejects(db.insertInto('sleep_sessions').values({ user_id: 'nobody', ...session }).execute(), 'only of a person');
    const [stored] = await db.selectFrom('sleep_sessions').select(['stages', 'end_time']).where('user_id', '=', 'a').execute();
    assert.deepEqual(Buffer.from(stored!.stages as Uint8Array), session.stages);
    assert.equal(Number(stored!.end_time), 4600);

    await db.deleteFrom('users').where('id', '=', 'a').execute();
    assert.deepEqual((await db.selectFrom('sleep_sessions').select('user_id').execute()).map((r) => r.user_id), ['b']);
    assert.deepEqual((await db.selectFrom('body_weights').select('user_id').execute()).map((r) => r.user_id), ['b']);
  });
});
