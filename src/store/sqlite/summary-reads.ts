/** The daily summary's statement on SQLite (the figures: ../daily-summary.ts). */
import type SQLite from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import { shapeOf, summaryStatement, type SummaryDialect, type SummaryReader, type SummaryRow, type SummaryShape } from '../daily-summary.js';

const SQLITE: SummaryDialect = {
  param: (name) => `@${name}`,
  value: (column, exact) => (exact ? `cast(${column} as text)` : column),
  noBytes: 'null',
};

/**
 * Prepared at the first read of each shape (the stores may be made before the migrations ran), run
 * in the turn's read transaction like the series reads (db/sqlite-turn-reads.ts). Rows come as
 * arrays: an object per row cost more than the statement. Integers are bound as BigInt (a JS
 * number is bound as REAL).
 */
export function sqliteSummaryReads(sqlite: SQLite.Database): SummaryReader {
  const statements = new Map<SummaryShape, Statement>();
  const turnRead = sqliteTurnReads(sqlite);
  return (read) =>
    turnRead(() => {
      const shape = shapeOf(read);
      let statement = statements.get(shape);
      if (statement === undefined) {
        statement = sqlite.prepare(summaryStatement(SQLITE, shape)).raw(true);
        statements.set(shape, statement);
      }
      return statement.all({
        user: read.userId,
        kinds: BigInt(read.kinds),
        dayFrom: BigInt(read.dayFrom),
        dayTo: BigInt(read.dayTo),
        from: BigInt(read.from),
        to: BigInt(read.to),
      }) as SummaryRow[];
    });
}
