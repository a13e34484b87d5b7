/**
 * Deletes expired codes, tokens and sessions, and events and finished deliveries past
 * EVENT_RETENTION, so tables do not grow without end (docs/operations.md, "The sweeper"). On
 * PostgreSQL it also makes the coming days' and months' partitions and drops the days of events and
 * deliveries past retention whole (docs/decisions/0039-postgres-partitions.md).
 * Rotated refresh tokens are kept until their own expiry: reuse detection needs them. Sessions
 * are kept ENDED_SESSION_KEPT_SECONDS past theirs, to know whose a form sent after it ended was.
 *
 * In bounded batches, with a pause between them, so that requests keep their latency while a
 * large backlog goes: no statement holds SQLite's writer, or locks PostgreSQL rows, for long. On
 * PostgreSQL a batch skips rows another process's sweeper holds (SKIP LOCKED): several processes
 * sweeping at once share the work, and never wait on or repeat each other.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db/database.js';
import { dropPartitionsBefore, ensurePartitionsAhead, partitioned } from '../db/partitions.js';
import type { Database } from '../db/schema.js';
import { ENDED_SESSION_KEPT_SECONDS } from './sessions.js';

export const SWEEP_BATCH = 1000;
/** How long past its expiry a deleted access token's app is remembered (docs/decisions/0040-usage-of-refused-tokens.md). */
export const ENDED_TOKEN_KEPT_SECONDS = 7 * 86_400;
/** Between two batches: time for the requests that queued behind one to run. */
export const SWEEP_PAUSE_MS = 10;

/** Each table's key, and which of its rows are done as of `before`. */
const TABLES = {
  authorization_codes: { key: 'code_hash', done: (before: number) => sql`expires_at <= ${before}` },
  device_codes: { key: 'device_code_hash', done: (before: number) => sql`expires_at <= ${before}` },
  // Kept a while past expiry: a consent page shown for one is answered within that time (0020).
  pushed_authorization_requests: { key: 'request_uri_hash', done: (before: number) => sql`expires_at <= ${before - 3600}` },
  access_tokens: { key: 'token_key', done: (before: number) => sql`expires_at <= ${before}` },
  // Which app a deleted token was issued to, for the usage of requests still carrying it (docs/decisions/0040-usage-of-refused-tokens.md).
  ended_access_tokens: { key: 'token_key', done: (before: number) => sql`expires_at <= ${before - ENDED_TOKEN_KEPT_SECONDS}` },
  // Kept a day past expiry, so that a late click is told the link expired rather than unknown.
  password_resets: { key: 'token_hash', done: (before: number) => sql`expires_at <= ${before - 86_400}` },
  refresh_tokens: { key: 'token_key', done: (before: number) => sql`expires_at <= ${before}` },
  dpop_proofs: { key: 'proof_key', done: (before: number) => sql`expires_at <= ${before}` },
  sessions: { key: 'id_hash', done: (before: number) => sql`expires_at <= ${before - ENDED_SESSION_KEPT_SECONDS}` },
  // Its own batches below (eventsBatch): it has no index of its time.
  events: { key: 'seq', done: (before: number) => sql`created_at < ${before}` },
  webhook_deliveries: { key: 'id', done: (before: number) => sql`state <> 'pending' and created_at < ${before}` },
} as const;

export type SweptTable = keyof typeof TABLES;

export interface SweepResult {
  /** Rows deleted per table. */
  deleted: Record<SweptTable, number>;
  batches: number;
  seconds: number;
  /** PostgreSQL: the partitions made ahead and the expired ones dropped whole (docs/decisions/0039-postgres-partitions.md). */
  partitions: { made: string[]; dropped: string[] };
}

/** Codes and tokens expired at `now`, sessions ENDED_SESSION_KEPT_SECONDS before; events and finished deliveries made before `eventsBefore`. */
export async function sweepExpired(
  db: Kysely<Database>,
  dialect: Dialect,
  now: number,
  eventsBefore: number,
  { batchSize = SWEEP_BATCH, pauseMs = SWEEP_PAUSE_MS } = {},
): Promise<SweepResult> {
  const started = performance.now();
  const deleted = {} as Record<SweptTable, number>;
  const skipLocked = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  let batches = 0;
  const partitions = { made: [] as string[], dropped: [] as string[] };
  if (dialect === 'postgres') {
    partitions.made = await ensurePartitionsAhead(db, now);
    // Whole days of events and deliveries first; the rows left (the DEFAULT partition's, the
    // cut-off day's, a day's still holding a pending delivery) go in batches below.
    for (const table of ['events', 'webhook_deliveries'] as const) partitions.dropped.push(...(await dropPartitionsBefore(db, partitioned(table), eventsBefore)));
  }
  for (const table of Object.keys(TABLES) as SweptTable[]) {
    const { key, done } = TABLES[table];
    const before = table === 'events' || table === 'webhook_deliveries' ? eventsBefore : now;
    deleted[table] = 0;
    for (;;) {
      const batch =
        table === 'events'
          ? eventsBatch(dialect, before, batchSize)
          : sql`
        delete from ${sql.table(table)} where ${sql.ref(key)} in (
          select ${sql.ref(key)} from ${sql.table(table)} where ${done(before)} limit ${batchSize} ${skipLocked})`;
      const result = await batch.execute(db);
      const rows = Number(result.numAffectedRows ?? 0n);
      deleted[table] += rows;
      batches++;
      if (rows < batchSize) break;
      await sleep(pauseMs);
    }
  }
  return { deleted, batches, seconds: (performance.now() - started) / 1000, partitions };
}

/**
 * A batch of expired events, found without an index of their time (docs/decisions/0042-compact-events.md).
 * SQLite: among the oldest seqs — seq grows with time, so the expired ones are the first; a batch
 * that finds fewer than its size reached the first event still kept (one written late, out of
 * order, goes at a later sweep, never early). PostgreSQL: the days past retention went whole with
 * their partitions; what remains are the rows of the DEFAULT partition (written while no
 * partition covered their day), found by a scan of that small table, and the rows of the day
 * that retention cuts, which wait for their day to go whole.
 */
function eventsBatch(dialect: Dialect, before: number, batchSize: number) {
  if (dialect === 'sqlite') {
    return sql`delete from events where seq in (select seq from events order by seq limit ${batchSize}) and created_at < ${before}`;
  }
  return sql`delete from events_default where ctid = any(array(
    select ctid from events_default where created_at < ${before} limit ${batchSize} for update skip locked))`;
}
