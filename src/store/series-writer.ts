/**
 * The one writer of the series store's minute metrics (db/series-metrics.ts), whatever their codec.
 * An upload merges its minutes into the UTC days they fall in (the last write of a minute wins), a
 * delete takes the minutes of a range out of them, an import fills only the minutes the person
 * holds nothing for. Each is one transaction that first takes the user's lock
 * (store/owner-lock.ts), so two writes to one day at the same moment run one after the other and
 * neither loses the other's minutes: it reads the day rows, changes them, packs and writes back
 * the days that changed (an emptied day loses its row), and records its event (docs/webhooks.md)
 * or notes the import's steps. What differs per codec — how a day is unpacked, compared and
 * packed, how a sample lands in a minute — is store/series-samples.ts.
 *
 * Writes of steps and of distance also rewrite the sums of the distance rows of their days
 * (store/distance-days.ts); when that changes the distance as read, a steps write records
 * distance.updated too.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { SERIES_METRICS, type SeriesMetric } from '../db/series-metrics.js';
import { DAY_SECONDS, MINUTES_PER_DAY, dayStartOf } from '../db/codec/day.js';
import { rewriteDistanceDays, type DayWrite } from './distance-days.js';
import { recordEvents, type DataEventType, type MinuteRange } from './events.js';
import { withOwnerLocked } from './owner-lock.js';
import { recordWritePosition } from './replica.js';
import { daysFrom, deleteDayRows, readDayRows, writeDayRows } from './series-rows.js';
import { dayEditsOf, type SampleOf } from './series-samples.js';
import { noteImportSteps, type ImportPart, type PendingChange, type StepNote, type StepOutcome } from './takeout-imports.js';

/** What the layers above db/ see of the declarations. */
export { SERIES_METRICS, SUM_METRIC_NAMES, type SumMetric } from '../db/series-metrics.js';
export { MAX_BPM, MIN_BPM, type HeartRateMinute, type MinuteSample } from './series-samples.js';

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

/** A minute metric's writes and export, its samples those of its codec (store/series-samples.ts). */
export interface SeriesWriter<Sample> {
  /**
   * Stores the minutes (a minute sent again replaces its value) and the event of `change`, in one
   * transaction; returns how many.
   */
  upsertSamples(userId: string, samples: readonly Sample[], change: SeriesChange): Promise<number>;
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
  fillSamples(userId: string, parts: ReadonlyArray<ImportPart<Sample>>, changeOf: (written: readonly number[]) => PendingChange): Promise<FillOutcome[]>;
  /**
   * The user's stored minutes after `afterMinute` (exclusive), in order, at most `limit`: one page
   * of an export. Distance: the uploaded minutes, not those derived from steps.
   */
  samplesAfter(userId: string, afterMinute: number, limit: number): Promise<Sample[]>;
}

/** `withReplica`: the metric is also read from a replica, so each write records its write position. */
export function createSeriesWriter<M extends SeriesMetric>(db: Db, metric: M, withReplica = false): SeriesWriter<SampleOf<M>> {
  const edits = dayEditsOf(metric);
  const event: DataEventType = SERIES_METRICS[metric].event;

  /**
   * Reads the days, lets `change` alter them, writes them back with what depends on them, and lets
   * `tell` record (or note) what changed; `change` answering false ends the transaction unwritten.
   */
  async function writeDays(
    userId: string,
    days: readonly number[],
    change: (found: Map<number, unknown>) => boolean | void,
    tell: (trx: Kysely<Database>, distanceChanged: readonly number[]) => Promise<void>,
  ): Promise<void> {
    await withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
      const found = new Map<number, unknown>();
      for (const row of await readDayRows(trx, userId, metric, days)) found.set(row.day_start, edits.unpack(row.minutes));
      const before = new Map([...found].map(([day, minutes]) => [day, edits.copy(minutes)]));
      if (change(found) === false) return;
      const writes: DayWrite<unknown>[] = [];
      for (const [day, after] of found) {
        const earlier = before.get(day) ?? null;
        if (earlier === null || !edits.same(earlier, after)) writes.push({ day, before: earlier, after });
      }
      await tell(trx, await writeBack(trx, userId, writes));
    });
    if (withReplica) await recordWritePosition(db.kysely, userId);
  }

  /** Writes the days back (an emptied day loses its row); returns the days whose distance derived from steps changed. */
  async function writeBack(trx: Kysely<Database>, userId: string, writes: DayWrite<unknown>[]): Promise<number[]> {
    // Steps and distance are minute values (db/series-metrics.ts); distance rows are written with the sums derived from steps.
    const minuteWrites = writes as DayWrite[];
    if (metric === 'distance') {
      await rewriteDistanceDays(trx, userId, 'distance', minuteWrites);
      return [];
    }
    await writeDayRows(trx, userId, metric, writes.filter((w) => !edits.isEmpty(w.after)).map((w) => ({ day_start: w.day, ...edits.pack(w.after) })));
    await deleteDayRows(trx, userId, metric, writes.filter((w) => w.before !== null && edits.isEmpty(w.after)).map((w) => w.day));
    return metric === 'steps' ? rewriteDistanceDays(trx, userId, 'steps', minuteWrites) : [];
  }

  /** The write's events: the metric's, and distance.updated when a steps write changed distance as read. */
  const recordChange = (trx: Kysely<Database>, userId: string, change: SeriesChange, distanceChanged: readonly number[]) => {
    const types: DataEventType[] = distanceChanged.length > 0 ? [event, 'distance.updated'] : [event];
    const data = { ranges: change.ranges, dates: change.dates };
    return recordEvents(trx, types.map((type) => ({ type, userId, data, now: change.now })), change.coalesceSeconds);
  };

  /**
   * Puts the samples in their minutes of `found` (a day without a row made empty): over what a minute
   * held, or with `fill` only in minutes that held nothing. Returns the starts `fill` wrote, ascending.
   */
  function put(found: Map<number, unknown>, samples: ReadonlyArray<SampleOf<M>>, fill: boolean): number[] {
    const written: number[] = [];
    for (const sample of samples) {
      const dayStart = dayStartOf(sample.start_time);
      let day = found.get(dayStart);
      if (day === undefined) found.set(dayStart, (day = edits.empty()));
      const m = (sample.start_time - dayStart) / 60;
      if (fill && edits.holds(day, m)) continue;
      edits.put(day, m, sample);
      if (fill) written.push(sample.start_time);
    }
    return written.sort((a, b) => a - b);
  }

  const daysOf = (samples: ReadonlyArray<SampleOf<M>>) => [...new Set(samples.map((sample) => dayStartOf(sample.start_time)))];

  return {
    async upsertSamples(userId, samples, change) {
      if (samples.length === 0) return 0;
      await writeDays(
        userId,
        daysOf(samples),
        (found) => void put(found, samples, false),
        (trx, distanceChanged) => recordChange(trx, userId, change, distanceChanged),
      );
      return samples.length;
    },

    async fillSamples(userId, parts, changeOf) {
      let written: number[][] = [];
      await writeDays(
        userId,
        daysOf(parts.flatMap((part) => part.records)),
        (found) => void (written = parts.map(({ records }) => put(found, records, true))),
        async (trx, distanceChanged) => {
          const notes: StepNote[] = parts.map(({ records, step }, i) => {
            const starts = written[i]!;
            const changes: StepOutcome['changes'] = {};
            if (starts.length > 0) {
              const change = changeOf(starts);
              changes[event] = change;
              // A steps write tells distance.updated over its own minutes when the distance of one of their days changed.
              if (starts.some((start) => distanceChanged.includes(dayStartOf(start)))) changes['distance.updated'] = change;
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
          for (const [dayStart, day] of [...found].sort(([a], [b]) => a - b)) {
            const first = Math.max(0, Math.ceil((from - dayStart) / 60));
            const end = Math.min(MINUTES_PER_DAY, Math.ceil((to - dayStart) / 60));
            for (let m = first; m < end; m++) {
              if (!edits.holds(day, m)) continue;
              edits.clear(day, m);
              deleted.push(dayStart + m * 60);
            }
          }
          return deleted.length > 0;
        },
        (trx, distanceChanged) => recordChange(trx, userId, changeOf(deleted), distanceChanged),
      );
      return deleted.length;
    },

    async samplesAfter(userId, afterMinute, limit) {
      const found: SampleOf<M>[] = [];
      for await (const row of daysFrom(db.kysely, userId, metric, afterMinute)) {
        const day = edits.unpack(row.minutes);
        for (let m = 0; m < MINUTES_PER_DAY && found.length < limit; m++) {
          const start_time = row.day_start + m * 60;
          if (edits.holds(day, m) && start_time > afterMinute) found.push(edits.sampleAt(day, m, start_time));
        }
        if (found.length >= limit) break;
      }
      return found;
    },
  };
}
