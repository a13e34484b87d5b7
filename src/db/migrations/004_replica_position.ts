/**
 * Where the write-ahead log stood after each user's latest step upload (PostgreSQL with a
 * streaming replica only): a series read of that user goes to the replica once the replica has
 * replayed that far, and to the primary before (docs/deployment.md, "The streaming replica").
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('steps_written_lsn', 'text').execute();
}
