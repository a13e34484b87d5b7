/**
 * Step samples and their rollups. Samples are upserted per minute; the rollup buckets they touch
 * (UTC quarter-hours, hours, days) are then recomputed from the level below in the same
 * transaction, so rollups always equal the sum of their minutes, whatever was replaced.
 */
import { sql, type Kysely } from 'kysely';
import type { Db, Dialect } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { bucketRuns } from '../calendar/step-buckets.js';
import { recordEvent, type MinuteRange } from './events.js';
import { recordWritePosition } from './replica.js';
import type { StepSums } from './step-series.js';

/** One minute of steps (docs/api.md): the minute's start, in seconds since the epoch, and its count. */
export interface StepSample {
  start_time: number;
  value: number;
}

/** Rollup widths in seconds, each a multiple of the one before. */
export const ROLLUP_WIDTHS = [900, 3600, 86400] as const;

/** What an upload changed, for its steps.updated event: the minute ranges and the local dates they touch. */
export interface StepsChange {
  ranges: MinuteRange[];
  dates: string[];
  now: number;
  /** WEBHOOK_COALESCE (docs/webhooks.md). */
  coalesceSeconds: number;
}

export interface StepStore {
  /**
   * Stores the minutes (a minute sent again replaces its value) and their rollups, and the
   * steps.updated event of `change`, in one transaction; returns how many.
   */
  upsertSamples(userId: string, samples: readonly StepSample[], change: StepsChange): Promise<number>;
  /** Step sums per bucket of a plan (store/step-series.ts). */
  sums: StepSums;
  /** The user's minute samples after `afterMinute` (exclusive), in order, at most `limit`: one page of an export. */
  samplesAfter(userId: string, afterMinute: number, limit: number): Promise<StepSample[]>;
}

/** `withReplica`: series are also read from a replica, so each upload records its write position. */
export function createStepStore(db: Db, sums: StepSums, withReplica = false): StepStore {
  return {
    async upsertSamples(userId, samples, change) {
      const count = await upsertSamples(db.kysely, db.dialect, userId, samples, change);
      if (withReplica && count > 0) await recordWritePosition(db.kysely, userId);
      return count;
    },
    sums,
    async samplesAfter(userId, afterMinute, limit) {
      const rows = await db.kysely
        .selectFrom('step_samples')
        .select(['minute_start', 'value'])
        .where('user_id', '=', userId)
        .where('minute_start', '>', afterMinute)
        .orderBy('minute_start')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ start_time: Number(row.minute_start), value: Number(row.value) }));
    },
  };
}

/** Rows per INSERT: 3 parameters each, well under SQLite's 32766-variable limit. */
const INSERT_CHUNK = 2000;

async function upsertSamples(
  db: Kysely<Database>,
  dialect: Dialect,
  userId: string,
  samples: readonly StepSample[],
  change: StepsChange,
): Promise<number> {
  if (samples.length === 0) return 0;
  await db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') {
      // Serialize writers of one user so concurrent uploads cannot leave rollups that miss the
      // other's minutes (SQLite transactions are serialized already).
      await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
    }
    for (let i = 0; i < samples.length; i += INSERT_CHUNK) {
      const rows = samples.slice(i, i + INSERT_CHUNK).map((s) => ({
        user_id: userId,
        minute_start: s.start_time,
        value: s.value,
      }));
      await trx
        .insertInto('step_samples')
        .values(rows)
        .onConflict((oc) => oc.columns(['user_id', 'minute_start']).doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
        .execute();
    }
    let sourceWidth = 60;
    for (const width of ROLLUP_WIDTHS) {
      for (const [from, to] of bucketRuns(samples.map((s) => s.start_time), width)) {
        await recomputeRollups(trx, userId, sourceWidth, width, from, to);
      }
      sourceWidth = width;
    }
    const { ranges, dates, now, coalesceSeconds } = change;
    await recordEvent(trx, { type: 'steps.updated', userId, audience: { scope: 'read_activity' }, data: { ranges, dates }, now }, coalesceSeconds);
  });
  return samples.length;
}

async function recomputeRollups(
  trx: Kysely<Database>,
  userId: string,
  sourceWidth: number,
  width: number,
  from: number,
  to: number,
): Promise<void> {
  // The width is inlined as an integer literal: better-sqlite3 binds numbers as REAL, and a
  // real divisor would make this a real division that keeps every minute its own bucket.
  if (!Number.isInteger(width)) throw new Error(`rollup width ${width} is not an integer`);
  const divisor = sql.lit(width);
  const buckets =
    sourceWidth === 60
      ? sql`select (minute_start / ${divisor}) * ${divisor} as b, value from step_samples
            where user_id = ${userId} and minute_start >= ${from} and minute_start < ${to}`
      : sql`select (bucket_start / ${divisor}) * ${divisor} as b, value from step_rollups
            where user_id = ${userId} and width = ${sourceWidth} and bucket_start >= ${from} and bucket_start < ${to}`;
  await sql`
    insert into step_rollups (user_id, width, bucket_start, value)
    select cast(${userId} as text), cast(${width} as integer), b, sum(value) from (${buckets}) as source
    group by b
    on conflict (user_id, width, bucket_start) do update set value = excluded.value
  `.execute(trx);
}
