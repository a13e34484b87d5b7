/**
 * The minute metrics whose buckets hold sums — steps, distance, calories — in the series store
 * (db/codec/minute-values.ts), one store per metric made by one factory. An upload merges its minutes into
 * the UTC days they fall in — read, replaced minute by minute (the last write of a minute wins),
 * packed and written back — and a delete takes the minutes of a range out of them, each in one
 * transaction that first takes the user's lock (store/owner-lock.ts), so two writes to one day at
 * the same moment run one after the other and neither loses the other's minutes. The write's event
 * is recorded in the same transaction (docs/webhooks.md).
 *
 * Values cross this interface in the API's units (kcal for calories) and are stored as integers of
 * 1/scale of them (tenths of a kcal). Writes of steps and of distance also rewrite the sums of the
 * distance rows of their days (store/distance-days.ts); when that changes the distance as read, a
 * steps write records distance.updated too.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { SERIES_METRICS, SUM_METRIC_NAMES, type SumMetric } from '../db/series-metrics.js';
import { ABSENT, emptyDay, isEmptyDay, packDay, sameMinutes, unpackMinutes, type DayMinutes } from '../db/codec/minute-values.js';
import { DAY_SECONDS, dayStartOf } from '../db/codec/day.js';
import { rewriteDistanceDays, type DayWrite } from './distance-days.js';
import { recordEvents, type DataEventType, type MinuteRange } from './events.js';
import { withOwnerLocked } from './owner-lock.js';
import { recordWritePosition } from './replica.js';
import { daysFrom, deleteDayRows, readDayRows, writeDayRows } from './series-rows.js';
import type { SeriesSums } from './series-sums.js';
import { noteImportSteps, type ImportPart, type PendingChange, type StepNote, type StepOutcome } from './takeout-imports.js';

export { SUM_METRIC_NAMES, type SumMetric };

/** One minute of a metric (docs/api.md): the minute's start, in seconds since the epoch, and its value. */
export interface MinuteSample {
  start_time: number;
  value: number;
}

/** What a write changed, for its event: the minute ranges and the local dates they touch. */
export interface SeriesChange {
  ranges: MinuteRange[];
  dates: string[];
  now: number;
  /** WEBHOOK_COALESCE (docs/webhooks.md). */
  coalesceSeconds: number;
}

/** The change of a delete, from the starts of the minutes it removed (ascending); run inside its transaction. */
export type ChangeOfMinutes = (minuteStarts: readonly number[]) => SeriesChange;

/** What an import's write did: minutes written, and minutes kept as the person held them. */
export interface FillOutcome {
  written: number;
  kept: number;
}

/** How a metric is stored: `scale` stored units to one unit of the API, and the event of its writes. */
export interface SumMetricStorage {
  metric: SumMetric;
  scale: number;
  event: DataEventType;
}

/** Each sum metric's storage, as db/series-metrics.ts declares it. */
export const SUM_METRIC_STORAGE: Readonly<Record<SumMetric, SumMetricStorage>> = Object.fromEntries(
  SUM_METRIC_NAMES.map((metric) => [metric, { metric, scale: SERIES_METRICS[metric].scale, event: SERIES_METRICS[metric].event }]),
) as Record<SumMetric, SumMetricStorage>;

export interface MinuteSeriesStore {
  /**
   * Stores the minutes (a minute sent again replaces its value) and the event of `change`, in one
   * transaction; returns how many.
   */
  upsertSamples(userId: string, samples: readonly MinuteSample[], change: SeriesChange): Promise<number>;
  /**
   * Removes the minutes starting in [from, to) and, when there were any, records the event of
   * `changeOf(their starts)`, in one transaction; returns how many minutes held a value.
   */
  deleteRange(userId: string, from: number, to: number, changeOf: ChangeOfMinutes): Promise<number>;
  /**
   * An import's minutes (store/takeout-imports.ts), a step's or several steps' in their order:
   * writes those the person holds nothing for yet and keeps the stored value of the others (a
   * device's minute wins), then notes each step with the change `changeOf(the starts it wrote)`
   * for the import's event, in one transaction, each day row written once. Records no event of
   * its own. Returns what each step's write did.
   */
  fillSamples(userId: string, parts: ReadonlyArray<ImportPart<MinuteSample>>, changeOf: (written: readonly number[]) => PendingChange): Promise<FillOutcome[]>;
  /** Sums per bucket of a plan (store/series-sums.ts), in stored units. */
  sums: SeriesSums;
  /**
   * The user's stored minutes after `afterMinute` (exclusive), in order, at most `limit`: one page
   * of an export. Distance: the uploaded minutes, not those derived from steps.
   */
  samplesAfter(userId: string, afterMinute: number, limit: number): Promise<MinuteSample[]>;
}


/** `withReplica`: series are also read from a replica, so each write records its write position. */
export function createMinuteSeriesStore(db: Db, storage: SumMetricStorage, sums: SeriesSums, withReplica = false): MinuteSeriesStore {
  const { metric, scale } = storage;
  const stored = (value: number) => Math.round(value * scale);

  /**
   * Reads the days, lets `change` alter them, writes them back with what depends on them, and lets
   * `tell` record (or note) what changed; `change` answering false ends the transaction unwritten.
   */
  async function writeDays(
    userId: string,
    days: number[],
    change: (read: Map<number, DayMinutes>) => boolean,
    tell: (trx: Kysely<Database>, distanceChanged: readonly number[]) => Promise<void>,
  ): Promise<void> {
    await withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
      const found = new Map<number, DayMinutes>();
      for (const row of await readDayRows(trx, userId, metric, days)) found.set(row.day_start, unpackMinutes(row.minutes));
      const before = new Map([...found].map(([day, minutes]) => [day, minutes.slice()]));
      if (!change(found)) return;
      const writes: DayWrite[] = [];
      for (const [day, after] of found) {
        const earlier = before.get(day) ?? null;
        if (earlier === null || !sameMinutes(earlier, after)) writes.push({ day, before: earlier, after });
      }
      await tell(trx, await writeBack(trx, userId, writes));
    });
    if (withReplica) await recordWritePosition(db.kysely, userId);
  }

  /** The events of a write: the metric's, and distance.updated when a steps write changed distance as read. */
  const recordBoth = (userId: string, change: SeriesChange) => async (trx: Kysely<Database>, distanceChanged: readonly number[]) => {
    const types: DataEventType[] = metric === 'steps' && distanceChanged.length > 0 ? [storage.event, 'distance.updated'] : [storage.event];
    await recordEvents(trx, types.map((type) => eventOf(userId, type, change)), change.coalesceSeconds);
  };

  /** Writes the days back (an emptied day loses its row); returns the days whose distance as read changed. */
  async function writeBack(trx: Kysely<Database>, userId: string, writes: DayWrite[]): Promise<number[]> {
    if (metric === 'distance') return rewriteDistanceDays(trx, userId, 'distance', writes);
    const emptied = writes.filter((w) => isEmptyDay(w.after));
    await writeDayRows(trx, userId, metric, writes.filter((w) => !isEmptyDay(w.after)).map((w) => ({ day_start: w.day, ...packDay(w.after) })));
    await deleteDayRows(trx, userId, metric, emptied.filter((w) => w.before !== null).map((w) => w.day));
    return metric === 'steps' ? rewriteDistanceDays(trx, userId, 'steps', writes) : [];
  }

  const eventOf = (userId: string, type: DataEventType, change: SeriesChange) => ({ type, userId, data: { ranges: change.ranges, dates: change.dates }, now: change.now });

  return {
    async upsertSamples(userId, samples, change) {
      if (samples.length === 0) return 0;
      const days = [...new Set(samples.map((sample) => dayStartOf(sample.start_time)))];
      await writeDays(
        userId,
        days,
        (found) => {
          for (const sample of samples) {
            const day = dayStartOf(sample.start_time);
            let minutes = found.get(day);
            if (!minutes) found.set(day, (minutes = emptyDay()));
            minutes[(sample.start_time - day) / 60] = stored(sample.value);
          }
          return true;
        },
        recordBoth(userId, change),
      );
      return samples.length;
    },

    async fillSamples(userId, parts, changeOf) {
      const days = [...new Set(parts.flatMap((part) => part.records.map((sample) => dayStartOf(sample.start_time))))];
      let written: number[][] = [];
      await writeDays(
        userId,
        days,
        (found) => {
          written = parts.map(({ records }) => {
            const starts: number[] = [];
            for (const sample of records) {
              const day = dayStartOf(sample.start_time);
              let minutes = found.get(day);
              if (!minutes) found.set(day, (minutes = emptyDay()));
              const m = (sample.start_time - day) / 60;
              if (minutes[m] !== ABSENT) continue;
              minutes[m] = stored(sample.value);
              starts.push(sample.start_time);
            }
            return starts.sort((a, b) => a - b);
          });
          return true;
        },
        async (trx, distanceChanged) => {
          const notes: StepNote[] = parts.map(({ records, step }, i) => {
            const starts = written[i]!;
            const changes: StepOutcome['changes'] = {};
            if (starts.length > 0) {
              const change = changeOf(starts);
              changes[storage.event] = change;
              // A steps write tells distance.updated over its own minutes when the distance of one of their days changed.
              if (metric === 'steps' && starts.some((start) => distanceChanged.includes(dayStartOf(start)))) changes['distance.updated'] = change;
            }
            return { step, outcome: { written: starts.length, kept: records.length - starts.length, changes } };
          });
          await noteImportSteps(trx, notes);
        },
      );
      return parts.map(({ records }, i) => ({ written: written[i]!.length, kept: records.length - written[i]!.length }));
    },

    async deleteRange(userId, from, to, changeOf) {
      const days: number[] = [];
      for (let day = dayStartOf(from); day < to; day += DAY_SECONDS) days.push(day);
      const deleted: number[] = [];
      await writeDays(
        userId,
        days,
        (found) => {
          for (const [day, minutes] of [...found].sort(([a], [b]) => a - b)) {
            const first = Math.max(0, Math.ceil((from - day) / 60));
            const end = Math.min(1440, Math.ceil((to - day) / 60));
            for (let m = first; m < end; m++) {
              if (minutes[m] === ABSENT) continue;
              minutes[m] = ABSENT;
              deleted.push(day + m * 60);
            }
          }
          return deleted.length > 0;
        },
        (trx, distanceChanged) => recordBoth(userId, changeOf(deleted))(trx, distanceChanged),
      );
      return deleted.length;
    },

    sums,

    async samplesAfter(userId, afterMinute, limit) {
      const found: MinuteSample[] = [];
      for await (const row of daysFrom(db.kysely, userId, metric, afterMinute)) {
        const minutes = unpackMinutes(row.minutes);
        for (let m = 0; m < minutes.length && found.length < limit; m++) {
          const start_time = row.day_start + m * 60;
          if (minutes[m] !== ABSENT && start_time > afterMinute) found.push({ start_time, value: minutes[m]! / scale });
        }
        if (found.length >= limit) break;
      }
      return found;
    },
  };
}
