/**
 * Sleep sessions and body weight (docs/decisions/0016-sleep-and-body-storage.md): one row per
 * session and one per measurement, keyed by the person and the session's start or the
 * measurement's time — the key a re-sent session or measurement replaces by. A session's stages
 * are packed into one column (db/codec/sleep-stages.ts); weights are integers (hundredths of a kilogram
 * and of a percent). Each row holds the random part of its public id (`id_tag`), so an id needs no
 * index of its own (store/record-ids.ts). Rows go with their user (on delete cascade).
 */
import { SqliteAdapter, sql, type CreateTableBuilder, type Kysely } from 'kysely';

/**
 * Both tables are read by ranges of their primary key, and their rows are small: on SQLite,
 * WITHOUT ROWID keeps them in that key's B-tree (no second tree for the key).
 */
function clusteredOnSqlite(db: Kysely<any>) {
  return <T extends string, C extends string>(builder: CreateTableBuilder<T, C>) =>
    db.getExecutor().adapter instanceof SqliteAdapter ? builder.modifyEnd(sql`without rowid`) : builder;
}

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('sleep_sessions')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('start_time', 'bigint', (c) => c.notNull())
    .addColumn('end_time', 'bigint', (c) => c.notNull())
    .addColumn('id_tag', 'integer', (c) => c.notNull())
    .addColumn('stages', sqlite ? 'blob' : 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('sleep_sessions_pk', ['user_id', 'start_time'])
    .$call(clusteredOnSqlite(db))
    .execute();
  await db.schema
    .createTable('body_weights')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('id_tag', 'integer', (c) => c.notNull())
    .addColumn('kg_hundredths', 'integer', (c) => c.notNull())
    // null: no body fat was sent.
    .addColumn('fat_hundredths', 'integer')
    .addPrimaryKeyConstraint('body_weights_pk', ['user_id', 'time'])
    .$call(clusteredOnSqlite(db))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('body_weights').ifExists().execute();
  await db.schema.dropTable('sleep_sessions').ifExists().execute();
}
