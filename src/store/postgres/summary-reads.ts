/** The daily summary's statement on PostgreSQL (the figures: ../daily-summary.ts). */
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { SUMMARY_SHAPES, shapeOf, summaryStatement, type SummaryDialect, type SummaryRead, type SummaryReader, type SummaryRow, type SummaryShape } from '../daily-summary.js';
import { unnestedParameters } from './kept-plans.js';

/** Summaries read in one statement at most; more start the next one at once. */
const MAX_BATCH = 256;

/** Every value as text, so that the union's column has one type; bigints are exact in it. */
const POSTGRES: SummaryDialect = {
  param: (name) => `k."${name}"`,
  value: (column) => `${column}::text`,
  noBytes: 'null::bytea',
};

/**
 * The summaries of one event-loop turn in ONE statement per shape (db/batched-calls.ts): the
 * reads' parameters as arrays, each read a lateral union over them. Rows as arrays, prefixed with
 * the number of the read they answer.
 */
export function postgresSummaryReads(pool: pg.Pool): SummaryReader {
  const readers = new Map(SUMMARY_SHAPES.map((shape) => [shape, summariesOfMany(pool, shape)]));
  return (read) => readers.get(shapeOf(read))!(read);
}

function summariesOfMany(pool: pg.Pool, shape: SummaryShape) {
  const text = `select k.i, s.kind, s.time, s.value, s.packed, s.minutes
    from ${unnestedParameters('text', 'int', 'bigint', 'bigint', 'bigint', 'bigint')} with ordinality as k("user", kinds, "dayFrom", "dayTo", "from", "to", i)
    cross join lateral (
    ${summaryStatement(POSTGRES, shape)}
    ) s`;
  return batchedCalls<SummaryRead, SummaryRow[]>(async (calls) => {
    const result = await pool.query<[string, ...SummaryRow]>({
      name: `stride_summary_${shape}`,
      text,
      rowMode: 'array',
      values: [
        calls.map((call) => call.input.userId),
        calls.map((call) => call.input.kinds),
        calls.map((call) => call.input.dayFrom),
        calls.map((call) => call.input.dayTo),
        calls.map((call) => call.input.from),
        calls.map((call) => call.input.to),
      ],
    });
    const rows: SummaryRow[][] = calls.map(() => []);
    for (const row of result.rows) rows[Number(row[0]) - 1]!.push(row.slice(1) as SummaryRow);
    calls.forEach((call, index) => call.resolve(rows[index]!));
  }, MAX_BATCH);
}
