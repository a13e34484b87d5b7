/**
 * Schema migrations, written once for both dialects and applied at start and by `stride migrate`.
 *
 * Several processes may start at once. Each run takes a lock, reads which migrations its schema
 * has, applies the rest in order and records them, all in one transaction (DDL is transactional
 * on both SQLite and PostgreSQL), so a run is all-or-nothing and a waiting process then finds
 * nothing left to do:
 * - PostgreSQL: a transaction-scoped advisory lock keyed by the current schema;
 * - SQLite: the file's write lock (BEGIN IMMEDIATE, waiting up to busy_timeout, then retrying).
 *
 * The bookkeeping is a plain table in the connection's own schema. (Kysely's Migrator was not used:
 * it introspects every table of every schema, which fails while another schema of the same
 * server is being dropped.)
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { Db } from './database.js';
import { immediateTransaction } from './sqlite-executor.js';
import * as initial from './migrations/001_initial.js';
import * as serverSecrets from './migrations/002_server_secrets.js';
import * as webhooks from './migrations/003_webhooks.js';
import * as replicaPosition from './migrations/004_replica_position.js';
import * as sessionDetails from './migrations/005_session_details.js';
import * as appUsage from './migrations/006_app_usage.js';
import * as seriesDays from './migrations/007_series_days.js';
import * as sleepAndBody from './migrations/008_sleep_and_body.js';
import * as compactMinutes from './migrations/009_compact_minutes.js';
import * as dpop from './migrations/010_dpop.js';
import * as parAndRegistration from './migrations/011_par_and_registration.js';
import * as deviceGrant from './migrations/012_device_grant.js';
import * as testPeople from './migrations/013_test_people.js';
import * as strideChanges from './migrations/014_stride_changes.js';
import * as requestedScope from './migrations/015_requested_scope.js';
import * as heartRateProfile from './migrations/016_heart_rate_profile.js';
import * as resetsAndEndedTokens from './migrations/017_resets_and_ended_tokens.js';
import * as fitbitSubscriptions from './migrations/018_fitbit_subscriptions.js';
import * as takeoutImports from './migrations/019_takeout_imports.js';
import * as takeoutImportChanges from './migrations/020_takeout_import_changes.js';
import * as postgresPartitions from './migrations/021_postgres_partitions.js';
import * as compactEvents from './migrations/022_compact_events.js';
import * as takeoutImportDates from './migrations/023_takeout_import_dates.js';

/** Every migration, applied in the order of their names. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '001_initial': initial,
  '002_server_secrets': serverSecrets,
  '003_webhooks': webhooks,
  '004_replica_position': replicaPosition,
  '005_session_details': sessionDetails,
  '006_app_usage': appUsage,
  '007_series_days': seriesDays,
  '008_sleep_and_body': sleepAndBody,
  '009_compact_minutes': compactMinutes,
  '010_dpop': dpop,
  '011_par_and_registration': parAndRegistration,
  '012_device_grant': deviceGrant,
  '013_test_people': testPeople,
  '014_stride_changes': strideChanges,
  '015_requested_scope': requestedScope,
  '016_heart_rate_profile': heartRateProfile,
  '017_resets_and_ended_tokens': resetsAndEndedTokens,
  '018_fitbit_subscriptions': fitbitSubscriptions,
  '019_takeout_imports': takeoutImports,
  '020_takeout_import_changes': takeoutImportChanges,
  '021_postgres_partitions': postgresPartitions,
  '022_compact_events': compactEvents,
  '023_takeout_import_dates': takeoutImportDates,
};

export class MigrationError extends Error {}

/** Arbitrary first key of the advisory lock, so it cannot collide with other users of the server. */
const LOCK_NAMESPACE = 0x57_52_44; // "SRD"

/** Applies every pending migration; returns the names applied by this call. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  try {
    return db.dialect === 'sqlite' ? await migrateSqlite(db) : await migratePostgres(db);
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function migratePostgres(db: Db): Promise<string[]> {
  return db.kysely.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(LOCK_NAMESPACE)}, hashtext(current_schema()))`.execute(trx);
    return applyPending(trx);
  });
}

function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

async function migrateSqlite(db: Db): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await immediateTransaction(db.kysely, applyPending);
    } catch (error) {
      // Busy at BEGIN IMMEDIATE: busy_timeout already waited; another process is migrating.
      if (isSqliteBusy(error) && attempt < 20) continue;
      throw error;
    }
  }
}

/** Runs inside the caller's transaction and lock. */
async function applyPending(db: Kysely<any>): Promise<string[]> {
  await db.schema
    .createTable('stride_migrations')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .execute();
  const rows = await db.selectFrom('stride_migrations').select('name').execute();
  const done = new Set(rows.map((row: { name: string }) => row.name));
  const known = Object.keys(MIGRATIONS).sort();
  const unknown = [...done].find((name) => !known.includes(name));
  if (unknown) {
    throw new MigrationError(`the database has migration ${unknown}, which this version of Stride does not know; upgrade Stride`);
  }
  const applied: string[] = [];
  for (const name of known) {
    if (done.has(name)) continue;
    try {
      await MIGRATIONS[name]!.up(db);
    } catch (error) {
      throw new MigrationError(`migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    await db.insertInto('stride_migrations').values({ name, applied_at: Math.floor(Date.now() / 1000) }).execute();
    applied.push(name);
  }
  return applied;
}
