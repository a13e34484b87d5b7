/**
 * 023_takeout_import_dates: an import under way during the upgrade keeps every change its steps had
 * noted as rows of `takeout_import_changes` — joined per import and date into rows of
 * `takeout_import_dates` (a bit per type, the ranges widened to cover every step's), the old table
 * dropped — and the import's end tells them as the rows before would have been told.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import type { Kysely } from 'kysely';
import { registerApp } from '../../../src/domain/apps.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { applyMigrationsBefore } from '../../support/migrations.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../../support/databases.js';
import { eventRows } from '../../support/events.js';
import { ALL_RESOURCE_SCOPES } from '../../support/tokens.js';

const JAN_1 = 1704067200;
const range = (start: number, minutes: number) => ({ start_time: start, end_time: start + minutes * 60 });
/** What two steps of a running import noted (as migration 020 left it), and one step of another import. */
const NOTED: Array<[string, string, object]> = [
  ['imp_running', 'steps.updated', { dates: ['2024-01-01', '2024-01-02'], ranges: [range(JAN_1 + 3600, 60), range(JAN_1 + 86_400 + 7200, 30)] }],
  ['imp_running', 'distance.updated', { dates: ['2024-01-01'], ranges: [range(JAN_1 + 3600, 60)] }],
  ['imp_running', 'steps.updated', { dates: ['2024-01-02'], ranges: [range(JAN_1 + 86_400 + 3600, 45)] }],
  ['imp_running', 'heartrate.updated', { dates: ['2024-01-01'] }],
  ['imp_running', 'body.updated', { dates: ['2024-01-03'] }],
  ['imp_other', 'steps.updated', { dates: ['2024-01-05'], ranges: [range(JAN_1 + 4 * 86_400, 10)] }],
];

forEachDialect('migration 023_takeout_import_dates', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
  });
  after(() => database.drop());

  it('joins the waiting changes of imports under way into a row per date, and the import\'s end tells them', async () => {
    const db = database.db.kysely as Kysely<any>;
    await applyMigrationsBefore(db, '023');
    for (const user of ['u1', 'u2']) await db.insertInto('users').values({ id: user, email: `${user}@example.com`, password_hash: 'x', display_name: user, created_at: 1, updated_at: 1 }).execute();
    const importRow = (id: string, user: string) => ({
      id, user_id: user, archive_path: '/nowhere.zip', archive_name: 'takeout.zip', archive_bytes: 1, archive_fingerprint: 'f', owns_archive: 0, state: 'running', timezone: 'UTC',
      preview: 'null', files_total: 3, next_file: 2, next_part: 0, report: JSON.stringify({ kinds: {}, not_read: {}, skipped: { total: 0, by_code: {}, entries: [] } }),
      pending_events: '{}', cancel_requested: 0, lease_owner: 'a', lease_until: 100, error: null, created_at: 1, updated_at: 1, started_at: 1, finished_at: null,
    });
    await db.insertInto('takeout_imports').values([importRow('imp_running', 'u1'), importRow('imp_other', 'u2')]).execute();
    await db.insertInto('takeout_import_changes').values(NOTED.map(([import_id, event_type, change]) => ({ import_id, event_type, change: JSON.stringify(change) }))).execute();

    assert.deepEqual(await migrateToLatest(database.db), ['023_takeout_import_dates']);

    const rows = await db.selectFrom('takeout_import_dates').select(['import_id', 'day', 'types', 'steps_start', 'steps_end', 'distance_start', 'heartrate_start']).orderBy('import_id').orderBy('day').execute();
    assert.deepEqual(
      rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && key !== 'import_id' ? Number(value) : value]))),
      [
        { import_id: 'imp_other', day: 19727, types: 1, steps_start: JAN_1 + 4 * 86_400, steps_end: JAN_1 + 4 * 86_400 + 600, distance_start: null, heartrate_start: null },
        // steps (1), distance (2) and heart rate (8, told without a range) on 2024-01-01.
        { import_id: 'imp_running', day: 19723, types: 11, steps_start: JAN_1 + 3600, steps_end: JAN_1 + 7200, distance_start: JAN_1 + 3600, heartrate_start: null },
        // Two steps' ranges on 2024-01-02, one covering both.
        { import_id: 'imp_running', day: 19724, types: 1, steps_start: JAN_1 + 86_400 + 3600, steps_end: JAN_1 + 86_400 + 7200 + 1800, distance_start: null, heartrate_start: null },
        { import_id: 'imp_running', day: 19725, types: 32, steps_start: null, steps_end: null, distance_start: null, heartrate_start: null },
      ],
    );
    const tables = dialect === 'sqlite'
      ? await db.selectFrom('sqlite_master').select('name').where('name', '=', 'takeout_import_changes').execute()
      : await db.selectFrom('information_schema.tables').select('table_name').where('table_name', '=', 'takeout_import_changes').where('table_schema', '=', database.schema!).execute();
    assert.deepEqual(tables, [], 'the old table is gone');

    // The import carries on and ends: an app reading everything hears one event per type.
    const { app } = await registerApp(database.stores.apps, () => 1, 'u1', { name: 'Reader', redirectUris: ['https://app.example.test/callback'], scopes: ALL_RESOURCE_SCOPES, isPublic: false });
    await db.insertInto('grants').values({ id: randomUUID(), user_id: 'u1', app_id: app.id, scope: ALL_RESOURCE_SCOPES.join(' '), created_at: 1, updated_at: 1, last_used_at: null }).execute();
    assert.equal(await database.stores.takeoutImports.finish('imp_running', 'a', 'done', null, 200, 0), true);
    const told = (await eventRows(db, { appId: app.id })).sort((a, b) => a.type.localeCompare(b.type));
    assert.deepEqual(
      told.map((event) => [event.type, JSON.parse(event.data)]),
      [
        ['body.updated', { user_id: 'u1', dates: ['2024-01-03'] }],
        ['distance.updated', { user_id: 'u1', dates: ['2024-01-01'], ranges: [range(JAN_1 + 3600, 60)] }],
        ['heartrate.updated', { user_id: 'u1', dates: ['2024-01-01'] }],
        ['steps.updated', { user_id: 'u1', dates: ['2024-01-01', '2024-01-02'], ranges: [range(JAN_1 + 3600, 60), range(JAN_1 + 86_400 + 3600, 90)] }],
      ],
    );
    assert.deepEqual(await db.selectFrom('takeout_import_dates').select('import_id').distinct().execute(), [{ import_id: 'imp_other' }], 'told and forgotten; the other import\'s wait');
  });
});
