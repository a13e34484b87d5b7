/** Series queries on PostgreSQL (the queries themselves: ../step-series.ts). */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { numberedPlaceholders } from '../placeholders.js';
import { MAX_PREPARED_SHAPES, sumsOf, USER, withUser, type SeriesColumns, type SeriesQuery, type SumsOfPlanMaker } from '../step-series.js';

export function postgresSums(pool: pg.Pool): SumsOfPlanMaker {
  const byText = new Map<string, (values: unknown[]) => Promise<SeriesColumns>>();
  return (plan, shape) => {
    let readColumns = byText.get(shape.text);
    if (readColumns === undefined) {
      // Beyond MAX_PREPARED_SHAPES a shape is not kept, nor prepared on the server's connections.
      const kept = byText.size < MAX_PREPARED_SHAPES;
      readColumns = shape.values.length < MAX_UNNEST_COLUMNS ? postgresSeriesColumns(pool, shape, kept) : postgresOwnColumns(pool, shape);
      if (kept) byText.set(shape.text, readColumns);
    }
    const read = readColumns;
    return async (userId) => sumsOf(plan, shape, await read(withUser(shape.values, userId)));
  };
}

/**
 * PostgreSQL's limit on the columns of a function in FROM: the batched statement unnests one
 * column per value of the shape, plus the ordinality. A shape with more values (a daily series of
 * years in a zone whose midnights are not on UTC hours, like Australia/Lord_Howe: corrections
 * for every day) is read by a statement of its own.
 */
const MAX_UNNEST_COLUMNS = 1664;

/** PostgreSQL: one series read by its own statement, not batched with others. */
function postgresOwnColumns(pool: pg.Pool, shape: SeriesQuery): (values: unknown[]) => Promise<SeriesColumns> {
  const text = numberedPlaceholders(shape.text);
  const count = shape.columns.length;
  return async (values) => {
    const result = await pool.query<Array<number | string>>({ text, values, rowMode: 'array' });
    const columns = Array.from({ length: count }, (): Array<number | string> => []);
    for (const row of result.rows) for (let c = 0; c < count; c++) columns[c]!.push(row[c]!);
    return columns;
  };
}

/** Most series one PostgreSQL statement reads; more start the next. */
const MAX_BATCH = 64;

/**
 * PostgreSQL: the series of one shape asked for during one turn of the event loop are read by ONE
 * statement (batched-calls.ts) — the shape's statement as a lateral subquery over arrays of each
 * series' values, its rows tagged with the series they answer — prepared by name once per shape.
 * OFFSET 0 keeps the subquery from being flattened into a join, so it stays one index range scan
 * per series whatever the planner knew of the tables when it made the plan.
 */
function postgresSeriesColumns(pool: pg.Pool, shape: SeriesQuery, named: boolean): (values: unknown[]) => Promise<SeriesColumns> {
  const arrays = shape.values.map((value, i) => `$${i + 1}::${value === USER || typeof value === 'string' ? 'text' : 'bigint'}[]`);
  const columns = shape.values.map((_, i) => `v${i + 1}`);
  let n = 0;
  const inner = shape.text.replace(/\?/g, () => `k.${columns[n++]}`);
  const text = `select k.n, s.* from unnest(${arrays.join(', ')}) with ordinality as k(${columns.join(', ')}, n)
    cross join lateral (select * from (${inner}) as q offset 0) as s`;
  const name = `stride_steps_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  const count = shape.columns.length;
  return batchedCalls<unknown[], SeriesColumns>(async (calls) => {
    const result = await pool.query<[number | string, ...Array<number | string>]>({
      ...(named && { name }),
      text,
      values: shape.values.map((_, i) => calls.map((call) => call.input[i])),
      rowMode: 'array',
    });
    const perCall = calls.map(() => Array.from({ length: count }, (): Array<number | string> => []));
    for (const row of result.rows) {
      const ofCall = perCall[Number(row[0]) - 1]!;
      for (let c = 0; c < count; c++) ofCall[c]!.push(row[c + 1]!);
    }
    calls.forEach((call, i) => call.resolve(perCall[i]!));
  }, MAX_BATCH);
}
