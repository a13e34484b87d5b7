/**
 * The move of minute steps into the series store (007_series_days): a database at 006 with step
 * samples of several users — more rows than one page of the conversion, days partly filled, zero
 * values — keeps every minute and every daily total, and the per-minute tables are gone.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { MIGRATIONS, migrateToLatest } from '../../../src/db/migrate.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../../support/databases.js';
import { minutesOfDays } from '../../support/series-days.js';

const FIRST = Date.UTC(2025, 2, 28) / 1000;

/** Every user's minutes: two with 15 full days (43,200 rows), one with a few scattered ones. */
function samples(): Array<{ user_id: string; minute_start: number; value: number }> {
  const rows = [];
  for (const [u, user] of ['full-a', 'full-b'].entries()) {
    for (let i = 0; i < 15 * 1440; i++) rows.push({ user_id: user, minute_start: FIRST + i * 60, value: (i * (u + 3)) % 211 });
  }
  for (const minute of [-1, 0, 1439, 1440, 50_000, 50_001]) rows.push({ user_id: 'sparse', minute_start: FIRST + minute * 60, value: minute === 0 ? 0 : 1000 });
  return rows;
}

function dailyTotals(rows: ReadonlyArray<{ user_id: string; minute_start: number; value: number }>) {
  const totals = new Map<string, number>();
  for (const row of rows) {
    const key = `${row.user_id} ${row.minute_start - (row.minute_start % 86_400)}`;
    totals.set(key, (totals.get(key) ?? 0) + row.value);
  }
  return totals;
}

forEachDialect('migration 007_series_days', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('packs every user\u2019s minutes into days, every daily total unchanged, and drops the per-minute tables', async () => {
    const db = database.db.kysely as Kysely<any>;
    const earlier = Object.keys(MIGRATIONS).sort().filter((name) => name < '007');
    for (const name of earlier) await MIGRATIONS[name]!.up(db);
    await db.schema.createTable('stride_migrations').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
    for (const name of earlier) await db.insertInto('stride_migrations').values({ name, applied_at: 0 }).execute();
    for (const id of ['full-a', 'full-b', 'sparse', 'none']) {
      await db.insertInto('users').values({ id, email: `${id}@example.com`, password_hash: 'x', display_name: id, stride_length_cm: null, created_at: 1, updated_at: 1 }).execute();
    }
    const before = samples();
    for (let i = 0; i < before.length; i += 2000) await db.insertInto('step_samples').values(before.slice(i, i + 2000)).execute();
    const totalsBefore = await sql<{ user_id: string; day: number | string; total: number | string }>`
      select user_id, (minute_start / 86400) * 86400 as day, sum(value) as total from step_samples group by 1, 2`.execute(db);
    const expectedTotals = dailyTotals(before);
    assert.equal(totalsBefore.rows.length, expectedTotals.size);

    const applied = await migrateToLatest(database.db);
    assert.deepEqual(applied, Object.keys(MIGRATIONS).sort().filter((name) => name >= '007'));

    // 009 follows, and derives distance rows from the steps.
    const days = await db.selectFrom('series_days').selectAll().where('metric', '=', 'steps').execute();
    const totalsAfter = new Map(days.map((row) => [`${row.user_id} ${Number(row.day_start)}`, Number(row.total)]));
    const totalsBeforeMap = new Map(totalsBefore.rows.map((row) => [`${row.user_id} ${Number(row.day)}`, Number(row.total)]));
    assert.deepEqual(totalsAfter, totalsBeforeMap, 'every user\u2019s every daily total');
    assert.deepEqual(totalsAfter, expectedTotals);
    for (const user of ['full-a', 'full-b', 'sparse']) {
      const kept = minutesOfDays(days.filter((row) => row.user_id === user) as Array<{ day_start: number; minutes: Uint8Array }>);
      const expected = before.filter((row) => row.user_id === user).map(({ minute_start, value }) => ({ minute_start, value }));
      assert.deepEqual(kept, expected, `every minute of ${user}`);
    }
    for (const table of ['step_samples', 'step_rollups']) {
      await assert.rejects(sql`select 1 from ${sql.table(table)}`.execute(db), `${table} is gone`);
    }
  });
});
