/**
 * Step series read from a streaming replica (DATABASE_REPLICA_URL, docs/deployment.md "The
 * streaming replica"), with read-your-writes: a user's series goes to the replica only once the
 * replica has replayed the user's latest upload, and to the primary until then. Everything that
 * decides access stays on the primary (the bearer check brings the user's write position with it).
 */
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../db/schema.js';
import type { SeriesSums } from './series-sums.js';

/** A WAL position as PostgreSQL prints a pg_lsn ('16/B374D848', two hexadecimal halves), as one number. */
export function lsnValue(lsn: string): bigint {
  const [high = '', low = ''] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

export interface ReplicaPosition {
  /** True once the replica has replayed the WAL up to `lsn` (null: nothing to wait for). */
  hasReplayed(lsn: string | null): Promise<boolean>;
}

/**
 * The replica's replay position, asked only when a read needs more than the last answer: replay
 * only moves forward, so any answer is a lower bound for the replica's state at a later read.
 * Callers that need to ask while a question is under way share it.
 */
export function replicaPosition(replica: pg.Pool): ReplicaPosition {
  let replayed = -1n;
  let asking: Promise<void> | null = null;
  const ask = () =>
    (asking ??= replica
      .query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn')
      .then((result) => {
        // null when the server is not replaying (not a replica, or promoted): never caught up.
        const lsn = result.rows[0]?.lsn;
        if (lsn) replayed = lsnValue(lsn) > replayed ? lsnValue(lsn) : replayed;
      })
      .finally(() => (asking = null)));
  return {
    async hasReplayed(lsn) {
      if (lsn === null) return true;
      const needed = lsnValue(lsn);
      if (needed <= replayed) return true;
      await ask();
      return needed <= replayed;
    },
  };
}

/**
 * Series from the replica when it has the user's latest upload, else from the primary; a replica
 * that cannot answer (down, restarting) leaves the read to the primary.
 */
export function replicaRoutedSums(primary: SeriesSums, replica: SeriesSums, position: ReplicaPosition): SeriesSums {
  return async (userId, plan, writtenAt = null, strideCm = null) => {
    if (await position.hasReplayed(writtenAt).catch(() => false)) {
      try {
        return await replica(userId, plan, writtenAt, strideCm);
      } catch {
        // The primary answers below.
      }
    }
    return primary(userId, plan, writtenAt, strideCm);
  };
}

/**
 * After a write of a minute series has committed: the primary's WAL insert position, which is at or past the
 * upload's commit record, becomes the user's write position.
 */
export async function recordWritePosition(db: Kysely<Database>, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ steps_written_lsn: sql<string>`pg_current_wal_insert_lsn()::text` })
    .where('id', '=', userId)
    .execute();
}
