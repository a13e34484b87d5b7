/**
 * What the daily summary (api/summary.ts) reads of a person, in ONE statement: the day rows of
 * steps, distance, calories and heart rate over the UTC days of the range's plan, the sleep
 * sessions ending within the range (their packed stages) and the weighings within it — each kind
 * only when the token may see it — and, for the rules that look at every minute (heart-rate zones
 * and active minutes, domain/daily-activity.ts), the minutes of steps, heart rate and calories
 * with the sleep sessions that cover any of them. On PostgreSQL the summaries of one event-loop turn share that
 * statement (store/postgres/summary-reads.ts): six reads a request, the sleep and weight ones a
 * round trip each, had cost 1.0–3.8 ms of event loop a summary against about 0.5 ms now
 * (docs/performance.md, "The daily summary in one statement").
 * On SQLite it is one statement in the turn's read transaction (store/sqlite/summary-reads.ts).
 *
 * The day rows are summed as the series routes sum them (series-sums.ts, heart-rate-series.ts);
 * a session gives only its end and its seconds asleep, counted from the packed stages without
 * unpacking them. Everything is read from the primary, as heart rate, sleep and weight always are
 * (a replica serves only the step series, store/replica.ts).
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { dayStartOf } from '../db/codec/day.js';
import { asleepSeconds } from '../db/codec/sleep-stages.js';
import { bucketsFromDays, type HeartRateDayRow } from './heart-rate-series.js';
import { switchedMinuteDays, type KeptMinuteDays, type MinuteDays, type SleepSpan } from './minute-days.js';
import { dayDetailFor, type DayDetail, type DayRow } from './series-days.js';
import { distanceSumsFromDays, sumsFromDays } from './series-sums.js';
import { MAX_SLEEP_SESSION_SECONDS } from './sleep.js';

/**
 * The kinds a summary may read, as bits of `SummaryRead.kinds`. `minutes`: the minutes of steps,
 * heart rate and calories and the sleep sessions covering them (SummaryFigures.minuteDays), whatever
 * else is read.
 */
export const SUMMARY_KINDS = { activity: 1, heartRate: 2, sleep: 4, weight: 8, minutes: 16 } as const;

/** One summary's read. */
export interface SummaryRead {
  userId: string;
  /** Bits of SUMMARY_KINDS. */
  kinds: number;
  /** Day rows with day_start in [dayFrom, dayTo), with `detail` (series-sums.ts). */
  dayFrom: number;
  dayTo: number;
  detail: DayDetail;
  /** The minutes of the rows of steps, heart rate and calories too, whatever the detail (SUMMARY_KINDS.minutes). */
  minutes: boolean;
  /** Sessions whose end_time, and weighings whose time, is in [from, to). */
  from: number;
  to: number;
}

/**
 * A row of the statement, as an array: [kind, time, value, packed, minutes]. For a day row: its
 * ROW_KIND, day_start, total (heart rate's as text: 58 bits), hours and minutes (null when the
 * detail leaves them out); for a session: ROW_KIND.sleep, end_time, start_time, its packed stages, null;
 * for a weighing: ROW_KIND.weight, time, kg_hundredths, null, null. Integers may come as text
 * (PostgreSQL).
 */
export type SummaryRow = [kind: number, time: number | string, value: number | string | null, packed: Uint8Array | null, minutes: Uint8Array | null];

/** The statement's rows of one summary read, in any order. */
export type SummaryReader = (read: SummaryRead) => Promise<SummaryRow[]>;

/** The `kind` of each row of the statement. */
export const ROW_KIND = { steps: 1, distance: 2, calories: 3, heartrate: 4, sleep: 5, weight: 6 } as const;

/** The series read, and the kinds (bits) that read each. */
const SERIES_BRANCHES = [
  { metric: 'steps', kind: ROW_KIND.steps, bits: SUMMARY_KINDS.activity | SUMMARY_KINDS.minutes },
  { metric: 'distance', kind: ROW_KIND.distance, bits: SUMMARY_KINDS.activity },
  { metric: 'calories', kind: ROW_KIND.calories, bits: SUMMARY_KINDS.activity | SUMMARY_KINDS.minutes },
  { metric: 'heartrate', kind: ROW_KIND.heartrate, bits: SUMMARY_KINDS.heartRate | SUMMARY_KINDS.minutes },
] as const;

/**
 * The packed columns a read gives, each shape its own statement: those of its detail, and with
 * `_minutes` also the minutes of steps, heart rate and calories (not of distance, whose sums do not
 * need them: each packed column read costs a buffer per row).
 */
export type SummaryShape = DayDetail | 'totals_minutes' | 'hours_minutes';
export const SUMMARY_SHAPES: readonly SummaryShape[] = ['totals', 'hours', 'minutes', 'totals_minutes', 'hours_minutes'];

export function shapeOf(read: Pick<SummaryRead, 'detail' | 'minutes'>): SummaryShape {
  return read.minutes && read.detail !== 'minutes' ? `${read.detail}_minutes` : read.detail;
}

/** How a dialect writes the parts of the statement that differ. */
export interface SummaryDialect {
  /** A parameter of the read: a placeholder, or a column of the batch's input. */
  param(name: 'user' | 'kinds' | 'dayFrom' | 'dayTo' | 'from' | 'to'): string;
  /**
   * An integer column in the union's value column; `exact`: one that may pass 2^53 (a heart-rate
   * total, 58 bits, db/codec/heart-rate-minutes.ts), which comes as text.
   */
  value(column: string, exact: boolean): string;
  /** Absent bytes. */
  noBytes: string;
}

/**
 * The union of the six reads, each a range of its table's primary key (or of series_days' unique
 * index) guarded by its kinds' bits, which the databases test once per read rather than per row.
 * No ORDER BY: each read walks its key in time order, and sorting their union cost SQLite a
 * temporary B-tree per read; the figures put each kind in order if it is not (inTimeOrder).
 */
export function summaryStatement(dialect: SummaryDialect, shape: SummaryShape): string {
  const { param: p, noBytes } = dialect;
  const hours = shape.startsWith('totals') ? noBytes : 'hours';
  const minutesOf = (metric: string) => (shape === 'minutes' || (shape.endsWith('_minutes') && metric !== 'distance') ? 'minutes' : noBytes);
  const series = SERIES_BRANCHES.map(
    ({ metric, kind, bits }) =>
      `select ${kind} as kind, day_start as time, ${dialect.value('total', metric === 'heartrate')} as value, ${hours} as packed, ${minutesOf(metric)} as minutes
      from series_days where user_id = ${p('user')} and metric = '${metric}' and day_start >= ${p('dayFrom')} and day_start < ${p('dayTo')} and (${p('kinds')} & ${bits}) <> 0`,
  );
  // A session ends at most MAX_SLEEP_SESSION_SECONDS after its start, the key's second column.
  // Those ending within the range, and the one that may go on past its end (whose minutes count).
  const sleep = `select ${ROW_KIND.sleep}, end_time, ${dialect.value('start_time', false)}, stages, ${noBytes}
      from sleep_sessions where user_id = ${p('user')} and start_time >= ${p('from')} - ${MAX_SLEEP_SESSION_SECONDS} and start_time < ${p('to')}
      and end_time >= ${p('from')} and (${p('kinds')} & ${SUMMARY_KINDS.sleep | SUMMARY_KINDS.minutes}) <> 0`;
  const weight = `select ${ROW_KIND.weight}, time, ${dialect.value('kg_hundredths', false)}, ${noBytes}, ${noBytes}
      from body_weights where user_id = ${p('user')} and time >= ${p('from')} and time < ${p('to')} and (${p('kinds')} & ${SUMMARY_KINDS.weight}) <> 0`;
  return [...series, sleep, weight].join('\n    union all ');
}

/** A session of the summary: when it ended, and its seconds asleep. */
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
  /** The minutes of steps, heart rate and calories of the UTC days of the plan, and the sleep sessions covering any. */
  minuteDays?: MinuteDays;
}

/**
 * The summary's figures for a day plan: `kinds` bits of SUMMARY_KINDS; [from, to) the range's
 * instants; `strideCm` the profile's stride length, for distance derived from steps.
 */
export type SummaryFiguresReader = (userId: string, plan: BucketPlan, range: { from: number; to: number }, kinds: number, strideCm: number | null) => Promise<SummaryFigures>;

const EMPTY = new Uint8Array(0);

export interface SummaryStore {
  figures: SummaryFiguresReader;
}

/** `minuteDays`: where the minutes read are unpacked, kept between reads (store/minute-days.ts). */
export function createSummaryStore(read: SummaryReader, minuteDays: KeptMinuteDays = switchedMinuteDays()): SummaryStore {
  return {
    async figures(userId, plan, range, kinds, strideCm) {
      const { boundaries } = plan;
      // The sums need what their boundaries cut; the rules of each minute need the minutes.
      const detail = dayDetailFor(boundaries);
      const minutes = (kinds & SUMMARY_KINDS.minutes) !== 0;
      const days = boundaries.length >= 2;
      const rows = await read({
        userId,
        kinds,
        dayFrom: days ? dayStartOf(boundaries[0]!) : 0,
        dayTo: days ? boundaries[boundaries.length - 1]! : 0,
        detail,
        minutes,
        from: range.from,
        to: range.to,
      });
      const series: DayRow[][] = [[], [], [], [], []];
      const sleep: SessionAsleep[] = [];
      const spans: SleepSpan[] = [];
      const weights: Weighing[] = [];
      for (const [kind, time, value, packed, minutes] of rows) {
        if (kind === ROW_KIND.sleep) {
          const end = Number(time);
          if (kinds & SUMMARY_KINDS.sleep && end < range.to) sleep.push({ end_time: end, asleep_seconds: asleepSeconds(packed!) });
          if (kinds & SUMMARY_KINDS.minutes) spans.push({ start_time: Number(value), end_time: end });
        } else if (kind === ROW_KIND.weight) weights.push({ time: Number(time), kg_hundredths: Number(value) });
        else series[kind]!.push({ day_start: time, total: value!, hours: packed ?? EMPTY, minutes: minutes ?? EMPTY });
      }
      const figures: SummaryFigures = {};
      const dayStart = (row: DayRow) => Number(row.day_start);
      for (const rows of series) inTimeOrder(rows, dayStart);
      if (kinds & SUMMARY_KINDS.activity) {
        const steps = series[ROW_KIND.steps]!;
        figures.steps = sumsFromDays(boundaries, steps);
        figures.distance = detail === 'minutes' ? distanceSumsFromDays(boundaries, series[ROW_KIND.distance]!, steps, strideCm) : sumsFromDays(boundaries, series[ROW_KIND.distance]!);
        figures.calories = sumsFromDays(boundaries, series[ROW_KIND.calories]!);
      }
      if (kinds & SUMMARY_KINDS.heartRate) {
        figures.resting = bucketsFromDays(plan, detail, series[ROW_KIND.heartrate] as HeartRateDayRow[]).resting ?? [];
      }
      if (kinds & SUMMARY_KINDS.sleep) figures.sleep = inTimeOrder(sleep, (session) => session.end_time);
      // A date's weight is its last weighing.
      if (kinds & SUMMARY_KINDS.weight) figures.weights = inTimeOrder(weights, (weighing) => weighing.time);
      if (kinds & SUMMARY_KINDS.minutes) figures.minuteDays = minuteDays.daysOf(userId, series[ROW_KIND.steps]!, series[ROW_KIND.heartrate]!, series[ROW_KIND.calories]!, spans);
      return figures;
    },
  };
}

/**
 * `list` by `timeOf`, ascending: the sums walk days in order (series-sums.ts). Sorted only when
 * out of order; a read's rows come in its key's order.
 */
function inTimeOrder<T>(list: T[], timeOf: (item: T) => number): T[] {
  for (let i = 1; i < list.length; i++) {
    if (timeOf(list[i - 1]!) > timeOf(list[i]!)) return list.sort((a, b) => timeOf(a) - timeOf(b));
  }
  return list;
}
