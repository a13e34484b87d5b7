/**
 * PostgreSQL's partitions (docs/decisions/0039-postgres-partitions.md): `series_days` by month of
 * its day, `events` and `webhook_deliveries` by day of their making. Each table has a DEFAULT
 * partition, so a write never fails for a date no partition covers (years of imported history, a
 * server that did not run for a week); the server makes the coming periods' partitions at start and
 * in every sweep, and the sweeper drops the partitions of events and deliveries past retention
 * whole. SQLite keeps its tables as they are.
 */
import { sql, type Kysely } from 'kysely';

export type PartitionUnit = 'month' | 'day';

export interface PartitionedTable {
  table: 'series_days' | 'events' | 'webhook_deliveries';
  /** The partition key: epoch seconds. */
  column: string;
  unit: PartitionUnit;
  /** How many periods past the current one are made ahead of time. */
  ahead: number;
}

export const PARTITIONED: readonly PartitionedTable[] = [
  { table: 'series_days', column: 'day_start', unit: 'month', ahead: 2 },
  { table: 'events', column: 'created_at', unit: 'day', ahead: 7 },
  { table: 'webhook_deliveries', column: 'created_at', unit: 'day', ahead: 7 },
];

export function partitioned(table: PartitionedTable['table']): PartitionedTable {
  return PARTITIONED.find((p) => p.table === table)!;
}

/** The UTC period (month or day) holding `epochSeconds`: its start and the next one's, in seconds. */
export function periodOf(unit: PartitionUnit, epochSeconds: number): { from: number; to: number } {
  const date = new Date(epochSeconds * 1000);
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  if (unit === 'month') return { from: Date.UTC(y, m, 1) / 1000, to: Date.UTC(y, m + 1, 1) / 1000 };
  const d = date.getUTCDate();
  return { from: Date.UTC(y, m, d) / 1000, to: Date.UTC(y, m, d + 1) / 1000 };
}

/** `series_days_2026_11`, `events_2026_11_29`: the period is read back from the name. */
export function partitionName(spec: PartitionedTable, from: number): string {
  const date = new Date(from * 1000);
  const parts = [date.getUTCFullYear(), date.getUTCMonth() + 1, ...(spec.unit === 'day' ? [date.getUTCDate()] : [])];
  return `${spec.table}_${parts.map((n, i) => (i === 0 ? String(n) : String(n).padStart(2, '0'))).join('_')}`;
}

/** The period a partition's name stands for, or undefined for the DEFAULT partition and anything else. */
export function periodOfName(spec: PartitionedTable, name: string): { from: number; to: number } | undefined {
  const pattern = spec.unit === 'month' ? /^(\d{4})_(\d{2})$/ : /^(\d{4})_(\d{2})_(\d{2})$/;
  if (!name.startsWith(`${spec.table}_`)) return undefined;
  const match = pattern.exec(name.slice(spec.table.length + 1));
  if (!match) return undefined;
  const from = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3] ?? 1)) / 1000;
  return periodOf(spec.unit, from);
}

/** The names of a table's partitions in the connection's schema. */
export async function partitionsOf(db: Kysely<any>, table: string): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent
    where p.relname = ${table} and p.relnamespace = to_regnamespace(current_schema())::oid
    order by c.relname`.execute(db);
  return result.rows.map((row) => row.name);
}

/**
 * The `pg_try_advisory_xact_lock` key (one per schema) held while one process changes partitions: the others
 * skip the work instead of racing it ("already exists") or queueing behind it.
 */
const UPKEEP_LOCK = sql`hashtext(current_schema() || '.stride_partition_upkeep')`;

/**
 * Making or dropping a partition locks the parent table ACCESS EXCLUSIVE: while it waits, every
 * request reading or writing the table waits behind it. A short lock timeout keeps that wait
 * short; the upkeep is tried again at the next sweep.
 */
const UPKEEP_LOCK_TIMEOUT = '1s';

/** SQLSTATE 55P03 (lock_not_available): the lock timeout passed. */
function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '55P03';
}

/**
 * Runs `change` in a transaction of its own holding the upkeep lock and `spec`'s table locked
 * first (so it is never part of a deadlock), or returns undefined where another process holds the
 * upkeep lock or the table stayed busy past the timeout. Inside a transaction already (a
 * migration, which holds the migration lock), `change` runs there.
 */
async function underUpkeepLock<T>(db: Kysely<any>, spec: PartitionedTable, change: (trx: Kysely<any>) => Promise<T>): Promise<T | undefined> {
  if (db.isTransaction) return change(db);
  try {
    return await db.transaction().execute(async (trx) => {
      const got = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${UPKEEP_LOCK}) as got`.execute(trx);
      if (!got.rows[0]?.got) return undefined;
      await sql`set local lock_timeout = ${sql.lit(UPKEEP_LOCK_TIMEOUT)}`.execute(trx);
      await sql`lock table ${sql.table(spec.table)} in access exclusive mode`.execute(trx);
      return change(trx);
    });
  } catch (error) {
    if (isLockTimeout(error)) return undefined;
    throw error;
  }
}

async function partitionExists(db: Kysely<any>, name: string): Promise<boolean> {
  return (await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(db)).rows[0]?.found === true;
}

/**
 * Makes the partition of the period holding `epochSeconds`, unless it exists; true when made. A
 * period whose rows already sit in the DEFAULT partition (written while no partition covered them)
 * cannot be made without moving them: those rows are moved in the same transaction.
 */
export async function ensurePartition(db: Kysely<any>, spec: PartitionedTable, epochSeconds: number): Promise<boolean> {
  const { from, to } = periodOf(spec.unit, epochSeconds);
  const name = partitionName(spec, from);
  if (await partitionExists(db, name)) return false;
  const made = await underUpkeepLock(db, spec, async (trx) => {
    if (await partitionExists(trx, name)) return false;
    const fallback = sql.table(`${spec.table}_default`);
    const key = sql.ref(spec.column);
    const stray = await sql<{ n: number }>`select count(*)::int as n from ${fallback} where ${key} >= ${from} and ${key} < ${to}`.execute(trx);
    if ((stray.rows[0]?.n ?? 0) === 0) {
      await sql`create table ${sql.table(name)} partition of ${sql.table(spec.table)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx);
      return true;
    }
    await sql`create table ${sql.table(name)} (like ${sql.table(spec.table)} including defaults including constraints)`.execute(trx);
    await sql`with moved as (delete from ${fallback} where ${key} >= ${from} and ${key} < ${to} returning *) insert into ${sql.table(name)} select * from moved`.execute(trx);
    await sql`alter table ${sql.table(spec.table)} attach partition ${sql.table(name)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx);
    return true;
  });
  return made === true;
}

/** The partitions of the current period and the `ahead` next ones, for every partitioned table. */
export async function ensurePartitionsAhead(db: Kysely<any>, now: number): Promise<string[]> {
  const made: string[] = [];
  for (const spec of PARTITIONED) {
    let at = now;
    for (let i = 0; i <= spec.ahead; i++) {
      const { from, to } = periodOf(spec.unit, at);
      if (await ensurePartition(db, spec, from)) made.push(partitionName(spec, from));
      at = to;
    }
  }
  return made;
}

/**
 * Drops a table's partitions whose whole period ends at or before `before`. For deliveries, a
 * partition still holding a pending delivery is kept (its finished rows go one by one instead).
 */
export async function dropPartitionsBefore(db: Kysely<any>, spec: PartitionedTable, before: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const name of await partitionsOf(db, spec.table)) {
    const period = periodOfName(spec, name);
    if (!period || period.to > before) continue;
    const gone = await underUpkeepLock(db, spec, async (trx) => {
      // Another process may have dropped it since the list was read.
      if (!(await partitionExists(trx, name))) return false;
      if (spec.table === 'webhook_deliveries') {
        const pending = await sql<{ found: boolean }>`select exists (select 1 from ${sql.table(name)} where state = 'pending') as found`.execute(trx);
        if (pending.rows[0]?.found) return false;
      }
      await sql`drop table if exists ${sql.table(name)}`.execute(trx);
      return true;
    });
    if (gone) dropped.push(name);
  }
  return dropped;
}
