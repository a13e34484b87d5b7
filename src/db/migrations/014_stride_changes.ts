/**
 * A person's stride-length changes (docs/decisions/0031-stride-changes.md): when the stride length
 * last changed, which bounds how often it may, and how far the recomputation of the distance their
 * steps derive has come, so that any process can carry it on after a restart.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stride_changes')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    // 1 while the distance rows of some days with steps still hold sums of the stride before.
    .addColumn('pending', 'integer', (c) => c.notNull())
    // The last UTC day start recomputed; null: none yet.
    .addColumn('done_through', 'bigint')
    .execute();
  await db.schema.createIndex('stride_changes_pending').on('stride_changes').column('pending').execute();
}
