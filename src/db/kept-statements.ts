/**
 * The statements of one better-sqlite3 connection, prepared at their first use and kept: SQLite's
 * prepare (parsing and planning) costs more than running the hot statements. Keyed by SQL and by
 * how rows come back, since better-sqlite3's modes (raw, pluck, safe integers) are the statement's.
 */
import type SQLite from 'better-sqlite3';

export type RowMode = 'objects' | 'raw' | 'pluck' | 'bigints' | 'raw-bigints';

export type KeptStatement = <Row = unknown>(sql: string, mode?: RowMode) => SQLite.Statement<unknown[], Row>;

export function keptStatements(handle: SQLite.Database): KeptStatement {
  const kept = new Map<string, SQLite.Statement>();
  return <Row>(sql: string, mode: RowMode = 'objects') => {
    const key = `${mode}\u0000${sql}`;
    let statement = kept.get(key);
    if (statement === undefined) {
      statement = handle.prepare(sql);
      if (mode === 'raw' || mode === 'raw-bigints') statement.raw(true);
      if (mode === 'pluck') statement.pluck(true);
      if (mode === 'bigints' || mode === 'raw-bigints') statement.safeIntegers(true);
      kept.set(key, statement);
    }
    return statement as SQLite.Statement<unknown[], Row>;
  };
}
