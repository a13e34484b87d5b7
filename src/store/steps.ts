/**
 * Steps in the series store (db/series-day.ts): an upload merges its minutes into the UTC days they
 * fall in — read, replaced minute by minute (the last write of a minute wins), packed and written
 * back — in one transaction that first takes the user's lock (store/owner-lock.ts), so two uploads
 * to one day at the same moment run one after the other and neither loses the other's minutes.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { ABSENT, DAY_SECONDS, dayStartOf, emptyDay, packDay, unpackMinutes, type DayMinutes } from '../db/series-day.js';
import { recordEvent, type MinuteRange } from './events.js';
import { withOwnerLocked } from './owner-lock.js';
import { recordWritePosition } from './replica.js';
import type { StepSums } from './step-series.js';

/** One minute of steps (docs/api.md): the minute's start, in seconds since the epoch, and its count. */
export interface StepSample {
  start_time: number;
  value: number;
}

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
   * Stores the minutes (a minute sent again replaces its value) and the steps.updated event of
   * `change`, in one transaction; returns how many.
   */
  upsertSamples(userId: string, samples: readonly StepSample[], change: StepsChange): Promise<number>;
  /** Step sums per bucket of a plan (store/step-series.ts). */
  sums: StepSums;
  /** The user's minute samples after `afterMinute` (exclusive), in order, at most `limit`: one page of an export. */
  samplesAfter(userId: string, afterMinute: number, limit: number): Promise<StepSample[]>;
}

/** Days read per query of an export page. */
const EXPORT_DAYS = 8;
/** Days per SELECT or INSERT of an upload (6 parameters per row written). */
const DAY_CHUNK = 500;

/** `withReplica`: series are also read from a replica, so each upload records its write position. */
export function createStepStore(db: Db, sums: StepSums, withReplica = false): StepStore {
  return {
    async upsertSamples(userId, samples, change) {
      if (samples.length === 0) return 0;
      await withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        await mergeMinutes(trx, userId, samples);
        const { ranges, dates, now, coalesceSeconds } = change;
        await recordEvent(trx, { type: 'steps.updated', userId, audience: { scope: 'read_activity' }, data: { ranges, dates }, now }, coalesceSeconds);
      });
      if (withReplica) await recordWritePosition(db.kysely, userId);
      return samples.length;
    },
    sums,
    async samplesAfter(userId, afterMinute, limit) {
      const found: StepSample[] = [];
      let from = dayStartOf(afterMinute);
      while (found.length < limit) {
        const rows = await db.kysely
          .selectFrom('series_days')
          .select(['day_start', 'minutes'])
          .where('user_id', '=', userId)
          .where('metric', '=', 'steps')
          .where('day_start', '>=', from)
          .orderBy('day_start')
          .limit(EXPORT_DAYS)
          .execute();
        for (const row of rows) {
          const day = Number(row.day_start);
          const minutes = unpackMinutes(row.minutes);
          for (let m = 0; m < minutes.length && found.length < limit; m++) {
            const start_time = day + m * 60;
            if (minutes[m] !== ABSENT && start_time > afterMinute) found.push({ start_time, value: minutes[m]! });
          }
        }
        if (rows.length < EXPORT_DAYS) break;
        from = Number(rows[rows.length - 1]!.day_start) + DAY_SECONDS;
      }
      return found;
    },
  };
}

/** Read-modify-write of every day the samples touch; runs under the user's lock. */
async function mergeMinutes(trx: Kysely<Database>, userId: string, samples: readonly StepSample[]): Promise<void> {
  const days = new Map<number, DayMinutes | null>();
  for (const sample of samples) days.set(dayStartOf(sample.start_time), null);
  const starts = [...days.keys()];
  for (let i = 0; i < starts.length; i += DAY_CHUNK) {
    const stored = await trx
      .selectFrom('series_days')
      .select(['day_start', 'minutes'])
      .where('user_id', '=', userId)
      .where('metric', '=', 'steps')
      .where('day_start', 'in', starts.slice(i, i + DAY_CHUNK))
      .execute();
    for (const row of stored) days.set(Number(row.day_start), unpackMinutes(row.minutes));
  }
  for (const sample of samples) {
    const day = dayStartOf(sample.start_time);
    let minutes = days.get(day);
    if (!minutes) days.set(day, (minutes = emptyDay()));
    minutes[(sample.start_time - day) / 60] = sample.value;
  }
  const rows = [...days].map(([day_start, minutes]) => ({ user_id: userId, metric: 'steps' as const, day_start, ...packDay(minutes!) }));
  for (let i = 0; i < rows.length; i += DAY_CHUNK) {
    await trx
      .insertInto('series_days')
      .values(rows.slice(i, i + DAY_CHUNK))
      .onConflict((oc) =>
        oc.columns(['user_id', 'metric', 'day_start']).doUpdateSet((eb) => ({
          total: eb.ref('excluded.total'),
          hours: eb.ref('excluded.hours'),
          minutes: eb.ref('excluded.minutes'),
        })),
      )
      .execute();
  }
}
