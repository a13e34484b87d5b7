/** The daily summary's statement on PostgreSQL (the figures: ../daily-summary.ts). */
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { summaryStatement, type SummaryDialect, type SummaryRead, type SummaryReader, type SummaryRow } from '../daily-summary.js';
import type { DayDetail } from '../series-sums.js';
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
 * The summaries of one event-loop turn in ONE statement per detail (db/batched-calls.ts): the
 * reads' parameters as arrays, each read a lateral union over them. Rows as arrays, prefixed with
 * the number of the read they answer.
 */
export function postgresSummaryReads(pool: pg.Pool): SummaryReader {
  const readers = {
    totals: summariesOfMany(pool, 'totals'),
    hours: summariesOfMany(pool, 'hours'),
    minutes: summariesOfMany(pool, 'minutes'),
  } satisfies Record<DayDetail, unknown>;
  return (read) => readers[read.detail](read);
}

function summariesOfMany(pool: pg.Pool, detail: DayDetail) {
  const text = `select k.i, s.kind, s.time, s.value, s.packed, s.minutes
    from ${unnestedParameters('text', 'int', 'bigint', 'bigint', 'bigint', 'bigint')} with ordinality as k("user", kinds, "dayFrom", "dayTo", "from", "to", i)
    cross join lateral (
    ${summaryStatement(POSTGRES, detail)}
    ) s`;
  return batchedCalls<SummaryRead, SummaryRow[]>(async (calls) => {
    const result = await pool.query<[string, ...SummaryRow]>({
      name: `stride_summary_${detail}`,
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
