/**
 * What the daily summary (api/summary.ts) reads of a person (SummaryFigures), each kind only when
 * asked: its series through the day reader every series reads through, summed as the series routes
 * sum them, and its sleep sessions and weighings through two prepared reads. Every read starts in one
 * turn of the event loop, so that the turn's day reads are batched as any series' are
 * (postgres/series-days.ts). Everything is read from the primary, as heart rate, sleep and weight
 * always are (a replica serves only the step series, store/replica.ts).
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import type { Db } from '../db/database.js';
import { preparedRead } from '../db/prepared-reads.js';
import { asleepSeconds } from '../db/codec/sleep-stages.js';
import type { SeriesMetric } from '../db/series-metrics.js';
import { bucketsFromDays } from './heart-rate-series.js';
import { switchedMinuteDays, type KeptMinuteDays, type MinuteDays } from './minute-days.js';
import { dayDetailFor, daysUnder, type DayReader, type DayRow } from './series-days.js';
import { distanceSumsFromDays, sumsFromDays } from './series-sums.js';
import { MAX_SLEEP_SESSION_SECONDS } from './sleep.js';

/** The kinds a summary may read, as bits of `kinds`. `minutes`: SummaryFigures.minuteDays, whatever else is read. */
export const SUMMARY_KINDS = { activity: 1, heartRate: 2, sleep: 4, weight: 8, minutes: 16 } as const;

/** A session of the summary: when it ended, and its seconds asleep (counted without unpacking its stages). */
export interface SessionAsleep {
  end_time: number;
  asleep_seconds: number;
}

/** A weighing of the summary. */
export interface Weighing {
  time: number;
  kg_hundredths: number;
}

/** What a summary read gives, per kind read; a kind not asked for is absent. */
export interface SummaryFigures {
  /** Per day of the plan (missing index: 0), in stored units (calories in tenths). */
  steps?: number[];
  distance?: number[];
  calories?: number[];
  /** Per day: the resting heart rate, or null. */
  resting?: Array<number | null>;
  /** Sessions ending within the range, by end. */
  sleep?: SessionAsleep[];
  /** Weighings within the range, oldest first. */
  weights?: Weighing[];
  /** For the rules that look at every minute (domain/daily-activity.ts): the minutes of steps, heart rate and calories of the UTC days of the plan, and the sleep sessions covering any. */
  minuteDays?: MinuteDays;
}

export interface SummaryStore {
  /**
   * The summary's figures for a day plan: `kinds` bits of SUMMARY_KINDS; [from, to) the range's
   * instants; `strideCm` the profile's stride length, for distance derived from steps.
   */
  figures(userId: string, plan: BucketPlan, range: { from: number; to: number }, kinds: number, strideCm: number | null): Promise<SummaryFigures>;
}

/** Rows as read: integers may come as text (PostgreSQL). */
interface SessionRow {
  start_time: number | string;
  end_time: number | string;
  stages: Uint8Array;
}

interface WeighingRow {
  time: number | string;
  kg_hundredths: number | string;
}

/**
 * `readDays`: the primary's day reader. `minuteDays`: where the minutes read are unpacked, kept
 * between reads (store/minute-days.ts).
 */
export function createSummaryStore(db: Db, readDays: DayReader, minuteDays: KeptMinuteDays = switchedMinuteDays()): SummaryStore {
  // A session ends at most MAX_SLEEP_SESSION_SECONDS after its start, the key's second column:
  // those ending within the range, and the one that may go on past its end (whose minutes count).
  const sessionsReaching = preparedRead<[string, number, number, number], SessionRow>(db, (k, userId, earliestStart, to, from) =>
    k.selectFrom('sleep_sessions').select(['start_time', 'end_time', 'stages']).where('user_id', '=', userId).where('start_time', '>=', earliestStart).where('start_time', '<', to).where('end_time', '>=', from).orderBy('start_time'),
  );
  const weighingsWithin = preparedRead<[string, number, number], WeighingRow>(db, (k, userId, from, to) =>
    k.selectFrom('body_weights').select(['time', 'kg_hundredths']).where('user_id', '=', userId).where('time', '>=', from).where('time', '<', to).orderBy('time'),
  );
  return {
    async figures(userId, plan, range, kinds, strideCm) {
      const { boundaries } = plan;
      const asked = (kind: number) => (kinds & kind) !== 0;
      const minutes = asked(SUMMARY_KINDS.minutes);
      // The sums need what their boundaries cut; the rules of each minute need the minutes.
      const detail = dayDetailFor(boundaries);
      const days = (metric: SeriesMetric, wanted: boolean, withMinutes: boolean): DayRow[] | Promise<DayRow[]> =>
        wanted || withMinutes ? daysUnder(readDays, userId, metric, boundaries, withMinutes ? 'minutes' : detail) : [];
      const [steps, distance, calories, heartRate, sessions, weighings] = await Promise.all([
        days('steps', asked(SUMMARY_KINDS.activity), minutes),
        days('distance', asked(SUMMARY_KINDS.activity), false),
        days('calories', asked(SUMMARY_KINDS.activity), minutes),
        days('heartrate', asked(SUMMARY_KINDS.heartRate), minutes),
        asked(SUMMARY_KINDS.sleep) || minutes ? sessionsReaching(userId, range.from - MAX_SLEEP_SESSION_SECONDS, range.to, range.from) : ([] as SessionRow[]),
        asked(SUMMARY_KINDS.weight) ? weighingsWithin(userId, range.from, range.to) : ([] as WeighingRow[]),
      ]);
      const figures: SummaryFigures = {};
      if (asked(SUMMARY_KINDS.activity)) {
        figures.steps = sumsFromDays(boundaries, steps);
        figures.distance = distanceSumsFromDays(boundaries, distance, steps, strideCm);
        figures.calories = sumsFromDays(boundaries, calories);
      }
      if (asked(SUMMARY_KINDS.heartRate)) figures.resting = bucketsFromDays(plan, heartRate).resting ?? [];
      // Sessions never overlap: by start is by end.
      if (asked(SUMMARY_KINDS.sleep)) {
        figures.sleep = sessions.filter((session) => Number(session.end_time) < range.to).map((session) => ({ end_time: Number(session.end_time), asleep_seconds: asleepSeconds(session.stages) }));
      }
      if (asked(SUMMARY_KINDS.weight)) figures.weights = weighings.map((weighing) => ({ time: Number(weighing.time), kg_hundredths: Number(weighing.kg_hundredths) }));
      if (minutes) {
        const spans = sessions.map((session) => ({ start_time: Number(session.start_time), end_time: Number(session.end_time) }));
        figures.minuteDays = minuteDays.daysOf(userId, steps, heartRate, calories, spans);
      }
      return figures;
    },
  };
}
