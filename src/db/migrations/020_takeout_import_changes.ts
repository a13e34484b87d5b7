/**
 * The changes an import's steps wait to tell, one row per step and event type, instead of one
 * JSON value on the import's row that every step read, joined and wrote back whole: that value
 * grew with the days imported (to about 215 KB for three years), so a step's cost grew with it
 * and its rewrites left free pages behind (docs/lab-notes/2026-11-29-takeout-figures.md). A step
 * now only inserts its own rows; the import's end reads, joins and deletes them.
 *
 * An import under way during the upgrade keeps what it had noted: its `pending_events` become rows
 * here, and the column is left empty ('{}') and no longer read.
 */
import { SqliteAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('takeout_import_changes')
    // The order the steps were noted in (joining does not depend on it; reading by it is stable).
    .addColumn('seq', sqlite ? 'integer' : 'bigserial', (c) => c.primaryKey())
    .addColumn('import_id', 'text', (c) => c.notNull().references('takeout_imports.id').onDelete('cascade'))
    // A data event type (`steps.updated`, …).
    .addColumn('event_type', 'text', (c) => c.notNull())
    // JSON: the step's change of that type, as an event tells it (store/dated-ranges.ts, DatedChange).
    .addColumn('change', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('takeout_import_changes_import').on('takeout_import_changes').columns(['import_id', 'seq']).execute();

  const noted = await db.selectFrom('takeout_imports').select(['id', 'pending_events']).where('pending_events', '<>', '{}').execute();
  for (const row of noted as Array<{ id: string; pending_events: string }>) {
    const pending = JSON.parse(row.pending_events) as Record<string, unknown>;
    const rows = Object.entries(pending).map(([type, change]) => ({ import_id: row.id, event_type: type, change: JSON.stringify(change) }));
    if (rows.length > 0) await db.insertInto('takeout_import_changes').values(rows).execute();
  }
  await db.updateTable('takeout_imports').set({ pending_events: '{}' }).where('pending_events', '<>', '{}').execute();
}
