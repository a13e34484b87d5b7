/**
 * A prepared query (./prepared-query.ts) that reads rows, run where the other reads of the turn
 * run: on SQLite as a better-sqlite3 statement prepared once, in the turn's read transaction
 * (./sqlite-turn-reads.ts); on PostgreSQL through Kysely, compiled once. On SQLite, while a Kysely
 * transaction is open on the handle (it spans awaits), the read goes through Kysely, so it never
 * reads inside another request's transaction.
 */
import type SQLite from 'better-sqlite3';
import type { Db } from './database.js';
import { preparedQuery, type PreparedQuery } from './prepared-query.js';
import { sqliteTurnReads } from './sqlite-turn-reads.js';

export type PreparedRead<Args extends unknown[], Row> = (...args: Args) => Promise<Row[]>;

export function preparedRead<Args extends unknown[], Row>(db: Db, build: Parameters<typeof preparedQuery<Args, Row>>[0]): PreparedRead<Args, Row> {
  const query: PreparedQuery<Args, Row> = preparedQuery(build);
  const viaKysely = async (...args: Args) => (await query(db.kysely, ...args)).rows;
  if (db.dialect !== 'sqlite') return viaKysely;
  const handle = db.sqlite;
  const turnRead = sqliteTurnReads(handle);
  // Prepared on first use: the stores may be made before the schema is migrated.
  let statement: SQLite.Statement<unknown[], Row> | undefined;
  return (...args) => {
    if (handle.inTransaction) return viaKysely(...args);
    return turnRead(() => {
      const { sql, values } = query.bind(db.kysely, ...args);
      statement ??= handle.prepare<unknown[], Row>(sql);
      return statement.all(...values);
    });
  };
}
