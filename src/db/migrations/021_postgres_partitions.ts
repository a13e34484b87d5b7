/**
 * PostgreSQL's partitions (docs/decisions/0039-postgres-partitions.md): `series_days` by month of its
 * day, `events` and `webhook_deliveries` by day of their making, each with a DEFAULT partition. Each
 * table is rebuilt as a partitioned one: a partition for every period its rows cover, its rows copied
 * over as they are, then its keys and indexes made again (a key of a partitioned table includes the
 * partition key: `events` (seq, created_at), `webhook_deliveries` (id, created_at); a sequence still
 * makes seq unique and ids are random). SQLite keeps its tables.
 */
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { ensurePartition, partitioned, type PartitionedTable } from '../partitions.js';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;

  await rebuild(db, partitioned('series_days'), async () => {
    await sql`alter table series_days add constraint series_days_pk primary key (user_id, metric, day_start)`.execute(db);
    await sql`alter table series_days add constraint series_days_user_id_fkey foreign key (user_id) references users (id) on delete cascade`.execute(db);
  });

  await rebuild(db, partitioned('events'), async () => {
    await sql`alter table events add constraint events_pkey primary key (seq, created_at)`.execute(db);
    await sql`alter table events add constraint events_app_id_fkey foreign key (app_id) references apps (id) on delete cascade`.execute(db);
    await sql`create index events_feed on events (app_id, txid, seq)`.execute(db);
    await sql`create index events_created on events (created_at)`.execute(db);
  });

  await rebuild(db, partitioned('webhook_deliveries'), async () => {
    await sql`alter table webhook_deliveries add constraint webhook_deliveries_pkey primary key (id, created_at)`.execute(db);
    await sql`alter table webhook_deliveries add constraint webhook_deliveries_endpoint_id_fkey foreign key (endpoint_id) references webhook_endpoints (id) on delete cascade`.execute(db);
    await sql`create index webhook_deliveries_due on webhook_deliveries (state, next_attempt_at)`.execute(db);
    await sql`create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at)`.execute(db);
  });
}

/**
 * The table renamed aside, a partitioned one of the same columns (in the same order, with the same
 * defaults) in its place, a partition per period of its rows and a DEFAULT one, the rows copied,
 * the old table dropped, then `keys` made on the new one (after the copy: cheaper than kept up row
 * by row). A sequence the old table owned (events.seq) passes to the new one first.
 */
async function rebuild(db: Kysely<any>, spec: PartitionedTable, keys: () => Promise<void>): Promise<void> {
  const { table, column } = spec;
  const old = `${table}_unpartitioned`;
  await sql`alter table ${sql.table(table)} rename to ${sql.table(old)}`.execute(db);
  await sql`create table ${sql.table(table)} (like ${sql.table(old)} including defaults) partition by range (${sql.ref(column)})`.execute(db);
  await sql`create table ${sql.table(`${table}_default`)} partition of ${sql.table(table)} default`.execute(db);
  const unit = spec.unit === 'month' ? 'month' : 'day';
  const periods = await sql<{ at: string }>`
    select distinct extract(epoch from date_trunc(${unit}, to_timestamp(${sql.ref(column)}) at time zone 'UTC'))::bigint as at
    from ${sql.table(old)}`.execute(db);
  for (const { at } of periods.rows) await ensurePartition(db, spec, Number(at));
  await sql`insert into ${sql.table(table)} select * from ${sql.table(old)}`.execute(db);
  const owned = await sql<{ seq: string; col: string }>`
    select s.relname as seq, a.attname as col from pg_depend d
    join pg_class s on s.oid = d.objid and s.relkind = 'S'
    join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
    where d.refobjid = ${old}::regclass and d.deptype = 'a'`.execute(db);
  for (const { seq, col } of owned.rows) await sql`alter sequence ${sql.table(seq)} owned by ${sql.table(table)}.${sql.ref(col)}`.execute(db);
  await sql`drop table ${sql.table(old)}`.execute(db);
  await keys();
}
