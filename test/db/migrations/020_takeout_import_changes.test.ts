/**
 * 020_takeout_import_changes: an import under way during the upgrade keeps every change it had
 * noted in `pending_events` — each event type's change becomes a row of its own, the column is
 * emptied. (Migration 023 turns those rows into rows per date; its test ends such an import.)
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Kysely } from 'kysely';
import { MIGRATIONS } from '../../../src/db/migrate.js';
import { applyMigrationsBefore } from '../../support/migrations.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../../support/databases.js';

const PENDING = {
  'steps.updated': { dates: ['2024-01-01', '2024-01-02'], ranges: [{ start_time: 1704103200, end_time: 1704106800 }, { start_time: 1704189600, end_time: 1704193200 }] },
  'heartrate.updated': { dates: ['2024-01-01'] },
};

forEachDialect('migration 020_takeout_import_changes', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('turns the waiting changes of an import under way into rows', async () => {
    const db = database.db.kysely as Kysely<any>;
    await applyMigrationsBefore(db, '020');
    await db.insertInto('users').values({ id: 'u1', email: 'u1@example.com', password_hash: 'x', display_name: 'u1', created_at: 1, updated_at: 1 }).execute();
    const importRow = (id: string, state: string, pending: object) => ({
      id, user_id: 'u1', archive_path: '/nowhere.zip', archive_name: 'takeout.zip', archive_bytes: 1, archive_fingerprint: 'f', owns_archive: 0, state, timezone: 'UTC',
      preview: 'null', files_total: 3, next_file: 2, next_part: 0, report: JSON.stringify({ kinds: {}, not_read: {}, skipped: { total: 0, by_code: {}, entries: [] } }),
      pending_events: JSON.stringify(pending), cancel_requested: 0, lease_owner: 'a', lease_until: 100, error: null, created_at: 1, updated_at: 1, started_at: 1, finished_at: null,
    });
    await db.insertInto('takeout_imports').values([importRow('imp_running', 'running', PENDING), importRow('imp_done', 'done', {})]).execute();

    await MIGRATIONS['020_takeout_import_changes']!.up(db);

    const rows = await db.selectFrom('takeout_import_changes').select(['import_id', 'event_type', 'change']).orderBy('event_type').execute();
    assert.deepEqual(
      rows.map((row) => ({ ...row, change: JSON.parse(row.change) })),
      [
        { import_id: 'imp_running', event_type: 'heartrate.updated', change: PENDING['heartrate.updated'] },
        { import_id: 'imp_running', event_type: 'steps.updated', change: PENDING['steps.updated'] },
      ],
    );
    assert.deepEqual((await db.selectFrom('takeout_imports').select('pending_events').execute()).map((row) => row.pending_events), ['{}', '{}']);
  });
});
