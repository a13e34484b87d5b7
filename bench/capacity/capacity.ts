/**
 * The capacity run (docs/performance.md, "The capacity run"): a PostgreSQL primary of its own with
 * a streaming replica, PgBouncer in transaction mode in front of the primary, two `stride serve`
 * processes on it (reads of series from the replica), simulated people syncing every simulated
 * quarter-hour and their apps reading, at one or more rates; then what it cost.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import { createStores } from '../../src/store/stores.js';
import { EVENT_TYPE_COUNTS, eventsIn } from '../lib/event-counts.js';
import { obtainTokens } from '../lib/oauth-client.js';
import { stopServer, type ServerProcess } from '../lib/processes.js';
import { ALL_SCOPES, REDIRECT_URI, STRIDE_ENDPOINTS, cli, startStride } from '../lib/servers.js';
import { startCapacityCluster, type CapacityCluster } from './cluster.js';
import { machineBusyMs, treeCpuMs } from './cpu.js';
import { runStep, type StepResult } from './load.js';
import { SimulatedPerson } from './people.js';

export interface CapacityOptions {
  people: number;
  /** Uploads a second of each step, in order; the run stops after the first step not sustained. */
  rates: number[];
  /** Seconds of each step. */
  stepSeconds: number;
  /** Seconds of the last step (the target), when the steps before it held. */
  targetSeconds: number;
  feedPerSecond: number;
  /** Extra node flags for the two Stride processes (e.g. --cpu-prof to see where their CPU goes). */
  strideFlags?: string[];
  /** What a step must meet to count as held. */
  limits: { uploadP99Ms: number; readP99Ms: number };
  log?: (line: string) => void;
}

export interface CpuProfile {
  /** CPU ms over the measured steps, by part; `others` is the rest of the machine (other users). */
  ms: Record<'primary' | 'replica' | 'pgbouncer' | 'stride' | 'driver' | 'others', number>;
  /** Cores busy on average, by part. */
  cores: Record<'primary' | 'replica' | 'pgbouncer' | 'stride' | 'driver' | 'others', number>;
}

export interface CapacityReport {
  people: number;
  /**
   * sustained: the rate reached (≥ 95 % of the target) without an error; held: sustained within the
   * latency limits as well.
   */
  steps: Array<StepResult & { sustained: boolean; held: boolean }>;
  /** The highest target (uploads a second) of a step sustained, or 0. */
  highestSustained: number;
  /** The highest target of a step held (latency limits met too), or 0. */
  highestHeld: number;
  uploads: number;
  reads: number;
  errors: number;
  personDays: number;
  walBytes: number;
  walBytesPerUpload: number;
  /** The primary's CPU (postmaster and backends) per upload, ms. */
  primaryCpuMsPerUpload: number;
  profile: CpuProfile;
  /** Bytes on disk (tables with indexes and TOAST) grown per person-day. */
  growthPerPersonDay: { data: Record<string, number>; events: Record<string, number>; dataTotal: number; eventsTotal: number };
  /** The replica's replay behind the primary at the end, bytes. */
  replicaLagBytes: number;
  /** One sweep deleting every event of the run (as retention would, all at once). */
  sweeper: { events: number; seconds: number; walBytes: number; primaryCpuMs: number };
  /** The primary's statements that took most of its time over the steps (pg_stat_statements), by time. */
  primaryStatements: StatementCost[];
}

/** One statement's share of the primary's work over the steps, per upload of the run. */
export interface StatementCost {
  /** The statement's text as pg_stat_statements normalises it, its first 120 characters. */
  query: string;
  callsPerUpload: number;
  /** Planning and execution together, ms per upload. */
  msPerUpload: number;
  planMsPerUpload: number;
}

/** The statements of the primary by time spent (planning and execution), the first `count`. */
async function statementCosts(client: pg.Client, uploads: number, count = 15): Promise<StatementCost[]> {
  const { rows } = await client.query<{ query: string; calls: string; total: number; plan: number }>(
    `select query, calls, total_plan_time + total_exec_time as total, total_plan_time as plan
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
       order by total desc limit $1`,
    [count],
  );
  const per = (value: number) => (uploads > 0 ? Math.round((value / uploads) * 1000) / 1000 : 0);
  return rows.map((row) => ({
    query: row.query.replace(/\s+/g, ' ').slice(0, 120),
    callsPerUpload: per(Number(row.calls)),
    msPerUpload: per(row.total),
    planMsPerUpload: per(row.plan),
  }));
}

const DATA_TABLES = ['series_days', 'sleep_sessions', 'body_weights'];
const EVENT_TABLES = ['events', 'webhook_deliveries'];

async function tableBytes(client: pg.Client, table: string): Promise<number> {
  // A partitioned table is the sum of its partitions (its own size is 0); a plain one has no tree.
  const { rows } = await client.query<{ bytes: string }>(
    'select greatest(coalesce(sum(pg_total_relation_size(relid)), 0), pg_total_relation_size($1::regclass))::bigint as bytes from pg_partition_tree($1::regclass)',
    [table],
  );
  return Number(rows[0]!.bytes);
}

async function tableSizes(client: pg.Client): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  for (const table of [...DATA_TABLES, ...EVENT_TABLES]) sizes[table] = await tableBytes(client, table);
  return sizes;
}

async function walLsn(client: pg.Client): Promise<string> {
  return (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
}

async function walBetween(client: pg.Client, from: string, to: string): Promise<number> {
  return Number((await client.query<{ bytes: string }>('select pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint as bytes', [to, from])).rows[0]!.bytes);
}

/** At most `width` of `work` at once. */
async function inBatches<T>(count: number, width: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) {
      const index = next++;
      results[index] = await work(index);
    }
  }));
  return results;
}

function cpuNow(cluster: CapacityCluster, strides: ServerProcess[]) {
  const usage = process.cpuUsage();
  return {
    primary: treeCpuMs(cluster.primary.pid()),
    replica: treeCpuMs(cluster.replica.pid()),
    pgbouncer: treeCpuMs(cluster.bouncer.pid()),
    stride: strides.reduce((sum, server) => sum + treeCpuMs(server.pid), 0),
    driver: (usage.user + usage.system) / 1000,
    machine: machineBusyMs(),
  };
}

export async function runCapacity(options: CapacityOptions): Promise<CapacityReport> {
  const log = options.log ?? (() => undefined);
  log('starting PostgreSQL (primary and replica) and PgBouncer…');
  const cluster = await startCapacityCluster();
  const strides: ServerProcess[] = [];
  const reader = new pg.Client({ connectionString: cluster.primaryUrl });
  try {
    await reader.connect();
    log(`creating ${options.people} people and an app…`);
    const password = `capacity-${randomBytes(9).toString('base64url')}`;
    const emails = Array.from({ length: options.people }, (_, index) => `person${index}@example.com`);
    // The first creates the schema; then the others in a few processes at once.
    await cli(cluster.primaryUrl, ['users', 'create', '--email', emails[0]!, '--password', password, '--name', 'Person 0']);
    await inBatches(emails.length - 1, 4, (index) => cli(cluster.primaryUrl, ['users', 'create', '--email', emails[index + 1]!, '--password', password, '--name', `Person ${index + 1}`]));
    const app = await cli<{ client_id: string; client_secret: string }>(cluster.primaryUrl, [
      'apps', 'create', '--owner', emails[0]!, '--name', 'Capacity App', '--redirect-uri', REDIRECT_URI, '--scopes', ALL_SCOPES.replaceAll(' ', ','),
    ]);
    const client = { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI };

    log('starting two Stride processes behind PgBouncer, reading from the replica…');
    const env = { DATABASE_TRANSACTION_POOLING: 'true', DATABASE_REPLICA_URL: cluster.replicaUrl };
    for (const name of ['stride A', 'stride B']) strides.push(await startStride(cluster.bouncerUrl, name, { env, nodeFlags: options.strideFlags }));

    log('each person obtains tokens once (login and consent)…');
    const tokens = await inBatches(emails.length, 4, async (index) => {
      const origin = strides[index % strides.length]!.origin;
      const [set] = await obtainTokens(origin, STRIDE_ENDPOINTS(origin), client, { username: emails[index]!, password }, { scope: ALL_SCOPES }, 1);
      return set!.access_token;
    });
    const people = tokens.map((token, index) => new SimulatedPerson(index, token, '2025-01-01'));

    const sizesBefore = await tableSizes(reader);
    const lsnBefore = await walLsn(reader);
    await reader.query('select pg_stat_statements_reset()');
    const cpuBefore = cpuNow(cluster, strides);
    const wallBefore = performance.now();

    const steps: CapacityReport['steps'] = [];
    const target = {
      origins: strides.map((server) => server.origin),
      people,
      appCredentials: Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64'),
      feedPerSecond: options.feedPerSecond,
      maxInFlight: 256,
    };
    for (const [index, rate] of options.rates.entries()) {
      const seconds = index === options.rates.length - 1 ? options.targetSeconds : options.stepSeconds;
      log(`step ${index + 1}/${options.rates.length}: ${rate} uploads/s for ${seconds} s…`);
      const result = await runStep(target, rate, seconds);
      const sustained = result.errors === 0 && result.uploads.perSecond >= 0.95 * rate;
      const held = sustained && result.uploads.p99Ms <= options.limits.uploadP99Ms && result.reads.p99Ms <= options.limits.readP99Ms;
      steps.push({ ...result, sustained, held });
      log(`  ${result.uploads.perSecond} uploads/s (p50 ${result.uploads.p50Ms} ms, p99 ${result.uploads.p99Ms} ms), ${result.reads.perSecond} reads/s (p50 ${result.reads.p50Ms} ms, p99 ${result.reads.p99Ms} ms), ${result.errors} errors: ${held ? 'held' : sustained ? 'sustained, latency over the limits' : 'not sustained'}`);
      if (!sustained) break;
    }

    const seconds = (performance.now() - wallBefore) / 1000;
    const cpuAfter = cpuNow(cluster, strides);
    const lsnAfter = await walLsn(reader);
    const sizesAfter = await tableSizes(reader);
    const statementsCounted = steps.reduce((sum, step) => sum + step.uploads.count, 0);
    const primaryStatements = await statementCosts(reader, statementsCounted);
    const lag = await reader.query<{ bytes: string | null }>('select max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn))::bigint as bytes from pg_stat_replication');

    const uploads = steps.reduce((sum, step) => sum + step.uploads.count, 0);
    const reads = steps.reduce((sum, step) => sum + step.reads.count, 0);
    const errors = steps.reduce((sum, step) => sum + step.errors, 0);
    const personDays = people.reduce((sum, person) => sum + person.personDays, 0);
    const walBytes = await walBetween(reader, lsnBefore, lsnAfter);
    const parts = ['primary', 'replica', 'pgbouncer', 'stride', 'driver'] as const;
    const ms = Object.fromEntries(parts.map((part) => [part, Math.round(cpuAfter[part] - cpuBefore[part])])) as CpuProfile['ms'];
    ms.others = Math.max(0, Math.round(cpuAfter.machine - cpuBefore.machine - parts.reduce((sum, part) => sum + ms[part], 0)));
    const cores = Object.fromEntries(Object.entries(ms).map(([part, value]) => [part, Math.round((value / 1000 / seconds) * 100) / 100])) as CpuProfile['cores'];
    const perDay = (tables: string[]) => Object.fromEntries(tables.map((table) => [table, personDays > 0 ? Math.round((sizesAfter[table]! - sizesBefore[table]!) / personDays) : 0]));
    const data = perDay(DATA_TABLES);
    const events = perDay(EVENT_TABLES);

    log('one sweep dropping the day of the run\'s events…');
    const sweeper = await measureSweep(cluster, reader);

    return {
      people: people.length,
      steps,
      highestSustained: Math.max(0, ...steps.filter((step) => step.sustained).map((step) => step.targetUploadsPerSecond)),
      highestHeld: Math.max(0, ...steps.filter((step) => step.held).map((step) => step.targetUploadsPerSecond)),
      uploads,
      reads,
      errors,
      personDays: Math.round(personDays * 100) / 100,
      walBytes,
      walBytesPerUpload: uploads > 0 ? Math.round(walBytes / uploads) : 0,
      primaryCpuMsPerUpload: uploads > 0 ? Math.round((ms.primary / uploads) * 100) / 100 : 0,
      profile: { ms, cores },
      growthPerPersonDay: {
        data,
        events,
        dataTotal: Object.values(data).reduce((sum, value) => sum + value, 0),
        eventsTotal: Object.values(events).reduce((sum, value) => sum + value, 0),
      },
      replicaLagBytes: Number(lag.rows[0]?.bytes ?? 0),
      sweeper,
      primaryStatements,
    };
  } finally {
    await reader.end().catch(() => undefined);
    await Promise.all(strides.map((server) => stopServer(server)));
    await cluster.stop();
  }
}

/**
 * The sweeper's cost for the run's events, measured on the primary as a server's sweep runs it:
 * with retention ending at the next UTC midnight, so that the run's day of events goes whole, as
 * every day of events goes (docs/decisions/0042-compact-events.md).
 */
async function measureSweep(cluster: CapacityCluster, reader: pg.Client): Promise<CapacityReport['sweeper']> {
  const db = openDatabase(cluster.primaryUrl);
  try {
    const stores = createStores(db);
    const events = async () => eventsIn((await reader.query<{ types: number; n: string }>(EVENT_TYPE_COUNTS)).rows).events;
    const before = await events();
    const lsn = await walLsn(reader);
    const cpu = treeCpuMs(cluster.primary.pid());
    const now = Math.floor(Date.now() / 1000);
    const began = performance.now();
    await stores.sweepExpired(now, (Math.floor(now / 86_400) + 1) * 86_400);
    const seconds = (performance.now() - began) / 1000;
    return {
      events: before - (await events()),
      seconds: Math.round(seconds * 1000) / 1000,
      walBytes: await walBetween(reader, lsn, await walLsn(reader)),
      primaryCpuMs: Math.round(treeCpuMs(cluster.primary.pid()) - cpu),
    };
  } finally {
    await db.close();
  }
}
