/** The daily summary's statement on SQLite (the figures: ../daily-summary.ts). */
import type { SqliteExecutor } from '../../db/executor.js';
import { shapeOf, summaryStatement, type SummaryDialect, type SummaryReader, type SummaryRow, type SummaryShape } from '../daily-summary.js';

const SQLITE: SummaryDialect = {
  param: (name) => `@${name}`,
  value: (column, exact) => (exact ? `cast(${column} as text)` : column),
  noBytes: 'null',
};

/**
 * Kept once prepared for each shape, run with the other reads of the turn on the read connection
 * like the series reads (db/sqlite-executor.ts). Rows come as
 * arrays: an object per row cost more than the statement. Integers are bound as BigInt (a JS
 * number is bound as REAL).
 */
export function sqliteSummaryReads(executor: SqliteExecutor): SummaryReader {
  // The SQL of each shape, built once.
  const statements = new Map<SummaryShape, string>();
  return (read) =>
    executor.read((connection) => {
      const shape = shapeOf(read);
      let text = statements.get(shape);
      if (text === undefined) {
        text = summaryStatement(SQLITE, shape);
        statements.set(shape, text);
      }
      return connection.statement(text, 'raw').all({
        user: read.userId,
        kinds: BigInt(read.kinds),
        dayFrom: BigInt(read.dayFrom),
        dayTo: BigInt(read.dayTo),
        from: BigInt(read.from),
        to: BigInt(read.to),
      }) as SummaryRow[];
    });
}
