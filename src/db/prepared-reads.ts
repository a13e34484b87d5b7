/**
 * A prepared query (./prepared-query.ts) that reads rows outside any transaction, run by the
 * database's executor (./executor.ts): on SQLite as a statement kept on the read connection, with
 * the other reads of the turn, answering the committed state (./sqlite-executor.ts); on PostgreSQL
 * through Kysely, compiled once. A read that belongs to a transaction runs the prepared query on
 * the transaction's Kysely instead.
 */
import type { Db } from './database.js';
import { preparedQuery, type PreparedQuery } from './prepared-query.js';

export type PreparedRead<Args extends unknown[], Row> = (...args: Args) => Promise<Row[]>;

export function preparedRead<Args extends unknown[], Row>(db: Db, build: Parameters<typeof preparedQuery<Args, Row>>[0]): PreparedRead<Args, Row> {
  const query: PreparedQuery<Args, Row> = preparedQuery(build);
  if (db.dialect !== 'sqlite') return async (...args) => (await query(db.kysely, ...args)).rows;
  const { executor, kysely } = db;
  return (...args) =>
    executor.read((connection) => {
      const { sql, values } = query.bind(kysely, ...args);
      return connection.statement<Row>(sql).all(...values);
    });
}
