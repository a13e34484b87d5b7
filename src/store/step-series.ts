/**
 * Summing stored steps into local-clock buckets with ONE query per series, whose cost depends on
 * the range and not on the length of the user's history: an index range scan of the primary key
 * (user_id, width, bucket_start) of the coarsest rollup that fits the buckets — or of
 * step_samples (user_id, minute_start) for minute buckets — grouped by the database. Daily series
 * in zones other than UTC read the day rollups with corrections instead (see Corrections below).
 *
 * Rows are grouped by the local-clock unit their start falls in, per UTC offset span: within a
 * span of one offset the unit of an instant t is floor((t + offset) / unit). Each group then lands
 * in the bucket that contains its first instant, so a 25-hour day collects the groups of both of
 * its offsets, and a repeated hour (same local unit, two offsets) stays two buckets.
 */
import type { Dialect } from '../db/database.js';
import { bucketRuns, lastIndexAtOrBefore, rollupWidthFor, STORED_WIDTHS, type BucketPlan, type StoredWidth } from '../calendar/step-buckets.js';

/**
 * Added before integer division so that dividends stay positive near the Unix epoch (division
 * truncates toward zero in SQL); a multiple of every unit.
 */
const POSITIVE_SHIFT = 2 * 86_400;

/**
 * A statement with `?` placeholders and its values. Every value that depends on the request (the
 * user, the times, the offsets) is a parameter, so a series of the same shape (number of offset
 * spans, widths read, count of rows around local midnights) has the same SQL text, prepared once.
 * Literals are kept only for what the code chooses from a handful of values: span indices and
 * the bucket unit.
 */
export interface SeriesQuery {
  text: string;
  values: unknown[];
  /** Whether the rows are sums per local-clock unit (else stored rows). */
  grouped: boolean;
  /** The columns of each row, in order (see SeriesColumns). */
  columns: readonly string[];
  /** Set when coarse rows straddling boundaries are read with corrections (rows: width, t, value). */
  corrections?: Corrections;
}

/**
 * Stands for the user's id among the values of a series' query: the query of a plan is the same
 * for every user, built once per plan, and the id is put in per request (withUser).
 */
export const USER = Symbol('user id');

class QueryText {
  readonly values: unknown[] = [];

  /** The user's id, compared with user_id. */
  user(): string {
    this.values.push(USER);
    return '?';
  }

  /** A parameter compared with a column. */
  param(value: unknown): string {
    if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    this.values.push(value);
    return '?';
  }

  /**
   * An integer parameter inside arithmetic: SQLite would divide a REAL (better-sqlite3 binds every
   * JS number as REAL), so it is cast; PostgreSQL then adds int4 to bigint, still integers.
   */
  integer(value: number): string {
    return `cast(${this.param(value)} as integer)`;
  }

  /** An integer parameter standing alone (a VALUES row): typed, as it has no column to take a type from. */
  bigint(value: number): string {
    return `cast(${this.param(value)} as bigint)`;
  }

  list(values: readonly number[]): string {
    return values.map((value) => this.param(value)).join(', ');
  }
}

function literal(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}

/** `case when t < s1 then e0 when t < s2 then e1 … else eN end`, one branch per offset span. */
function perSpan(q: QueryText, plan: BucketPlan, branch: (index: number) => string): string {
  const { spans } = plan;
  if (spans.length === 1) return branch(0);
  const whens = spans.slice(1).map((span, i) => `when t < ${q.param(span.start)} then ${branch(i)}`);
  return `case ${whens.join(' ')} else ${branch(spans.length - 1)} end`;
}

/** The SQL of the stored rows of a series, and how many rows it reads at most. */
interface StoredRows {
  text: string;
  rows: number;
}

/**
 * Coarse rows read although bucket boundaries cut through them: each coarse row (a UTC day) counts
 * for the bucket holding most of it, and every other piece of it is read as finer rows, which are
 * added to their own bucket and subtracted from that one. A 365-day series in Europe/Berlin then
 * reads 366 day rows and one or two hour rows per local midnight instead of 8,784 hour rows; in
 * Asia/Kolkata, 366 day rows and seven finer rows per midnight instead of about 9,100.
 */
interface Corrections {
  coarseWidth: number;
  coarseFrom: number;
  coarseTo: number;
  /** Bucket index each coarse row counts for, by its start; -1 when that piece is outside the series. */
  coarseBucket: Map<number, number>;
  /** Starts of the finer rows to read, per width. */
  finer: Map<number, number[]>;
  rows: number;
}

/** Rollup widths finer rows may come from (minutes live in step_samples; not used here). */
const CORRECTION_WIDTHS = STORED_WIDTHS.filter((width) => width >= 900);

function planCorrections(boundaries: readonly number[], fitting: number): Corrections | undefined {
  const coarseWidth = STORED_WIDTHS[0];
  if (fitting < 900 || fitting >= coarseWidth) return undefined;
  const from = boundaries[0]!;
  const to = boundaries[boundaries.length - 1]!;
  const coarseFrom = from - mod(from, coarseWidth);
  // Finer buckets than coarse rows (an hourly series) leave nothing to save: no plan is made.
  if (boundaries.length - 1 > Math.ceil((to - coarseFrom) / coarseWidth)) return undefined;
  const bucketOf = (t: number) => (t < from || t >= to ? -1 : lastIndexAtOrBefore(boundaries, t));
  const coarseBucket = new Map<number, number>();
  const finer = new Map<number, number[]>();
  let rows = 0;
  let next = lastIndexAtOrBefore(boundaries, coarseFrom) + 1; // first boundary after coarseFrom
  for (let day = coarseFrom; day < to; day += coarseWidth) {
    const cuts = [day];
    while (next < boundaries.length && boundaries[next]! <= day) next++;
    for (let i = next; i < boundaries.length && boundaries[i]! < day + coarseWidth; i++) cuts.push(boundaries[i]!);
    cuts.push(day + coarseWidth);
    let longest = 0;
    for (let i = 1; i < cuts.length - 1; i++) if (cuts[i + 1]! - cuts[i]! > cuts[longest + 1]! - cuts[longest]!) longest = i;
    const majority = bucketOf(cuts[longest]!);
    coarseBucket.set(day, majority);
    rows++;
    for (let i = 0; i < cuts.length - 1; i++) {
      if (i === longest || bucketOf(cuts[i]!) === majority) continue;
      // The piece [cuts[i], cuts[i + 1]) as aligned finer rows, largest first.
      for (let t = cuts[i]!; t < cuts[i + 1]!; ) {
        const width = CORRECTION_WIDTHS.find((w) => w < coarseWidth && t % w === 0 && t + w <= cuts[i + 1]!)!;
        let starts = finer.get(width);
        if (starts === undefined) finer.set(width, (starts = []));
        starts.push(t);
        rows++;
        t += width;
      }
    }
  }
  return { coarseWidth, coarseFrom, coarseTo: to, coarseBucket, finer, rows };
}

/**
 * The coarse rows in one range, and the finer rows of each width in ranges [from, to): the finer
 * rows of one piece are consecutive (five hours a day in America/New_York), and one index seek per
 * range followed by a few steps costs about half what a seek per row does. The ranges are the outer
 * loop: by CROSS JOIN on SQLite, by a lateral subquery on PostgreSQL (which would otherwise join
 * them to every row of the user, or test each row against a list of every start; OFFSET 0 keeps it
 * from flattening the subquery into that join).
 */
function correctedRowsSql(q: QueryText, c: Corrections, dialect: Dialect): string {
  const parts = [`select ${literal(c.coarseWidth)} as width, bucket_start as t, value from step_rollups where user_id = ${q.user()}
      and width = ${q.param(c.coarseWidth)} and bucket_start >= ${q.param(c.coarseFrom)} and bucket_start < ${q.param(c.coarseTo)}`];
  for (const [width, starts] of c.finer) {
    const ranges = bucketRuns(starts, width).map(([from, to]) => `(${q.bigint(from)}, ${q.bigint(to)})`);
    const rowsInRange = `where s.user_id = ${q.user()} and s.width = ${q.param(width)}
      and s.bucket_start >= r.column1 and s.bucket_start < r.column2`;
    parts.push(`select ${literal(width)} as width, s.bucket_start as t, s.value from (values ${ranges.join(', ')}) as r
      ${dialect === 'sqlite' ? `cross join step_rollups s ${rowsInRange}` : `cross join lateral (select bucket_start, value from step_rollups s ${rowsInRange} offset 0) as s`}`);
  }
  return parts.join(' union all ');
}

/** Step sums per bucket index from the columns of correctedRowsSql (width, t, value). */
function correctedSums(plan: BucketPlan, c: Corrections, [widths, times, values]: SeriesColumns): number[] {
  const { boundaries } = plan;
  const from = boundaries[0]!;
  const to = boundaries[boundaries.length - 1]!;
  const sums: number[] = [];
  const add = (index: number | undefined, value: number) => {
    if (index !== undefined && index >= 0) sums[index] = (sums[index] ?? 0) + value;
  };
  for (let row = 0; row < times!.length; row++) {
    const width = Number(widths![row]);
    const t = Number(times![row]);
    const value = Number(values![row]);
    const ofCoarse = c.coarseBucket.get(t - mod(t, c.coarseWidth));
    if (width === c.coarseWidth) {
      add(ofCoarse, value);
    } else {
      add(t < from || t >= to ? -1 : lastIndexAtOrBefore(boundaries, t), value);
      add(ofCoarse, -value);
    }
  }
  return sums;
}

/**
 * Where the rows of a series come from: `(t, value)` rows that never straddle a bucket boundary.
 * Mostly one rollup width; but when only a few coarser rows straddle a boundary (a 365-day series
 * in Asia/Kolkata: 366 of 8760 hours hold a local midnight), it reads the coarser rows that do not
 * and the finer rows inside the few that do, about a quarter of the rows of the finer width alone.
 */
function seriesRows(q: QueryText, boundaries: readonly number[], width: StoredWidth): StoredRows {
  const from = boundaries[0]!;
  const to = boundaries[boundaries.length - 1]!;
  const coarser = STORED_WIDTHS[STORED_WIDTHS.indexOf(width) - 1];
  if (coarser !== undefined) {
    const straddling = [...new Set(boundaries.filter((b) => b % coarser !== 0).map((b) => b - mod(b, coarser)))];
    const coarseRows = (Math.ceil(to / coarser) - Math.floor(from / coarser));
    if (coarseRows >= 4 * straddling.length) {
      const finer: number[] = [];
      for (const start of straddling) {
        for (let t = start; t < start + coarser; t += width) if (t >= from && t < to) finer.push(t);
      }
      let whole = `select bucket_start as t, value from step_rollups where user_id = ${q.user()}
        and width = ${q.param(coarser)} and bucket_start >= ${q.param(from - mod(from, coarser))}
        and bucket_start < ${q.param(to)}`;
      if (straddling.length) whole += ` and bucket_start not in (${q.list(straddling)})`;
      const rows = coarseRows - straddling.length + finer.length;
      if (finer.length === 0) return { text: whole, rows };
      return { text: `${whole} union all ${rowsOfWidth(q, width, (time) => `${time} in (${q.list(finer)})`)}`, rows };
    }
  }
  return {
    text: rowsOfWidth(q, width, (time) => `${time} >= ${q.param(from)} and ${time} < ${q.param(to)}`),
    rows: Math.ceil((to - from) / width),
  };
}

function rowsOfWidth(q: QueryText, width: number, timeCondition: (column: string) => string): string {
  return width === 60
    ? `select minute_start as t, value from step_samples where user_id = ${q.user()} and ${timeCondition('minute_start')}`
    : `select bucket_start as t, value from step_rollups where user_id = ${q.user()}
          and width = ${q.param(width)} and ${timeCondition('bucket_start')}`;
}

function mod(value: number, divisor: number): number {
  return ((value % divisor) + divisor) % divisor;
}

/**
 * The rows of a series query, column by column (`columns[c][row]`): `t, value` for stored rows
 * (`grouped` false), `span index, start of the local-clock unit, sum of its steps` (`grouped`
 * true), or `width, t, value` (corrections). PostgreSQL sends bigints and sums as text.
 */
export type SeriesColumns = ReadonlyArray<ReadonlyArray<number | string>>;

const STORED_COLUMNS = ['t', 'value'] as const;
const GROUPED_COLUMNS = ['span', 'unit_start', 'steps'] as const;
const CORRECTED_COLUMNS = ['width', 't', 'value'] as const;

/** The column of each kind that holds an instant (SQLite sends it relative to the series start). */
export const TIME_COLUMNS: ReadonlySet<string> = new Set(['t', 'unit_start']);

/**
 * Stored rows are grouped by the database only when there are many more of them than buckets (a
 * year of days from hourly rows): grouping costs a temporary B-tree, more than handing over a row
 * per bucket (30 days from daily rows) and adding them up here.
 */
const GROUP_WHEN_ROWS_PER_BUCKET_ABOVE = 2;

/** The values of a series' query with the user's id put in. */
export function withUser(values: readonly unknown[], userId: string): unknown[] {
  return values.map((value) => (value === USER ? userId : value));
}

/**
 * The one statement reading a series' stored steps, summed per local-clock unit when worth it, for
 * any user: the user's id is the USER marker among its values (withUser puts it in).
 */
function seriesShape(plan: BucketPlan, dialect: Dialect): SeriesQuery {
  const { spans, unitSeconds, boundaries } = plan;
  const q = new QueryText();
  const buckets = boundaries.length - 1;
  // Parameters are bound in the order of the text: the select list first, then the rows.
  const rowsOnly = new QueryText();
  const width = rollupWidthFor(boundaries);
  const stored = seriesRows(rowsOnly, boundaries, width);
  const corrections = planCorrections(boundaries, width);
  if (corrections && corrections.rows < stored.rows / 2) {
    const corrected = new QueryText();
    return { text: correctedRowsSql(corrected, corrections, dialect), values: corrected.values, grouped: false, columns: CORRECTED_COLUMNS, corrections };
  }
  if (stored.rows <= GROUP_WHEN_ROWS_PER_BUCKET_ABOVE * buckets) {
    return { text: stored.text, values: rowsOnly.values, grouped: false, columns: STORED_COLUMNS };
  }
  const span = perSpan(q, plan, (i) => literal(i));
  const unitStart = perSpan(q, plan, (i) => {
    const offset = spans[i]!.offset + POSITIVE_SHIFT;
    return `((t + ${q.integer(offset)}) / ${literal(unitSeconds)}) * ${literal(unitSeconds)} - ${q.integer(offset)}`;
  });
  return {
    text: `select ${span} as span, ${unitStart} as unit_start, sum(value) as steps from (${stored.text}) as stored group by 1, 2`,
    values: [...q.values, ...rowsOnly.values],
    grouped: true,
    columns: GROUPED_COLUMNS,
  };
}

/**
 * Step sums per bucket index of `plan` (missing index: no steps) from the columns of seriesShape's statement.
 * A stored row never straddles a bucket boundary, so it belongs to the bucket its start is in.
 */
function sumsPerBucket(plan: BucketPlan, grouped: boolean, columns: SeriesColumns): number[] {
  const { boundaries, spans } = plan;
  const sums: number[] = [];
  const [first, second, third] = columns;
  for (let row = 0; row < first!.length; row++) {
    let index: number;
    let value: number;
    if (grouped) {
      const spanStart = spans[Number(first![row])]!.start;
      // A unit that began before its offset span (the clock jumped into it) begins at the jump.
      index = lastIndexAtOrBefore(boundaries, Math.max(Number(second![row]), spanStart));
      value = Number(third![row]);
    } else {
      index = lastIndexAtOrBefore(boundaries, Number(first![row]));
      value = Number(second![row]);
    }
    sums[index] = (sums[index] ?? 0) + value;
  }
  return sums;
}

/** Step sums per bucket index of `plan` from the columns of `query`, whichever kind they are. */
export function sumsOf(plan: BucketPlan, query: SeriesQuery, columns: SeriesColumns): number[] {
  return query.corrections ? correctedSums(plan, query.corrections, columns) : sumsPerBucket(plan, query.grouped, columns);
}

/**
 * `writtenAt`: where the user's latest upload left the database, for a replica to have replayed
 * before it answers (store/replica.ts).
 */
export type StepSums = (userId: string, plan: BucketPlan, writtenAt?: string | null) => number[] | Promise<number[]>;

/** A plan's step sums for one user: the plan's statement, prepared, bound to the user's values. */
export type SumsOfPlan = (userId: string) => Promise<number[]>;

/** A dialect's execution of series queries (sqlite/step-series.ts, postgres/step-series.ts). */
export type SumsOfPlanMaker = (plan: BucketPlan, shape: SeriesQuery) => SumsOfPlan;

/** Distinct statement texts kept prepared; a series of a rarer shape beyond these is prepared each time. */
export const MAX_PREPARED_SHAPES = 200;

/**
 * Step sums per bucket index of `plan`. The query of a plan is built once and kept with the plan
 * (plans are kept by the series reader, see step-series.ts in domain/), and each statement text is
 * prepared once by the dialect's `sumsOfPlan`: better-sqlite3 statements on SQLite, statements
 * prepared by name on PostgreSQL (series of one shape asked for together read by one statement).
 */
export function createStepSums(dialect: Dialect, sumsOfPlan: SumsOfPlanMaker): StepSums {
  const ofPlan = new WeakMap<BucketPlan, SumsOfPlan>();
  return (userId, plan) => {
    if (plan.boundaries.length < 2) return [];
    let sums = ofPlan.get(plan);
    if (sums === undefined) {
      sums = sumsOfPlan(plan, seriesShape(plan, dialect));
      ofPlan.set(plan, sums);
    }
    return sums(userId);
  };
}
