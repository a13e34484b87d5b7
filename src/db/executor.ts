/**
 * How statements reach the database: one executor per dialect (docs/decisions/0034-executor-per-dialect.md).
 * The stores declare a hot read or write once — its SQL and how its rows are read (./declared.ts)
 * — and hand it to the executor of the open database, which owns what every such statement needs:
 * batching per turn of the event loop, group commit, statements kept once prepared, and on SQLite
 * which connection a statement runs on (./sqlite-executor.ts; PostgreSQL: ./postgres-executor.ts
 * and ./postgres-turns.ts).
 */
export type { SqliteConnection, SqliteExecutor } from './sqlite-executor.js';
export type { PostgresExecutor } from './postgres-executor.js';
export type { DeclaredStatements } from './declared.js';
