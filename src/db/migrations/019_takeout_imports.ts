/**
 * Imports of Google Takeout archives (docs/takeout.md): one row per import of a person's archive,
 * from its preview to its end — where it stands (the next file and part of it to read), its
 * report so far, the events its writes wait to send, and the lease of the process running it, so
 * that any server process may carry it on after a restart.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('takeout_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('archive_path', 'text', (c) => c.notNull())
    // The name shown to the person (the upload's file name; the path's last part from the CLI).
    .addColumn('archive_name', 'text', (c) => c.notNull())
    .addColumn('archive_bytes', 'bigint', (c) => c.notNull())
    // A digest of the archive's directory: a file replaced on disk is not read as the one previewed.
    .addColumn('archive_fingerprint', 'text', (c) => c.notNull())
    // 1: the server stored the upload and removes it when the import ends.
    .addColumn('owns_archive', 'integer', (c) => c.notNull())
    // previewed, queued, running, done, cancelled, failed.
    .addColumn('state', 'text', (c) => c.notNull())
    // The zone the archive's local times are read in (its Profile.csv's, else the person's).
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('preview', 'text', (c) => c.notNull())
    .addColumn('files_total', 'integer', (c) => c.notNull())
    // Resume here: the next file (in the import's order) and the next day group of it.
    .addColumn('next_file', 'integer', (c) => c.notNull())
    .addColumn('next_part', 'integer', (c) => c.notNull())
    .addColumn('report', 'text', (c) => c.notNull())
    // Per event type, the dates and ranges written so far that no event has told yet.
    .addColumn('pending_events', 'text', (c) => c.notNull())
    .addColumn('cancel_requested', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    // Why a failed import stopped.
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('takeout_imports_user').on('takeout_imports').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('takeout_imports_state').on('takeout_imports').columns(['state', 'lease_until']).execute();
  // One import queued or running per person, whatever process starts it.
  await sql`create unique index takeout_imports_one_active on takeout_imports (user_id) where state in ('queued', 'running')`.execute(db);
}
