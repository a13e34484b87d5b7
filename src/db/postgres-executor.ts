/**
 * The PostgreSQL executor. Every statement runs on a pooled connection of its own, so a read
 * outside a transaction never sees another request's uncommitted rows (READ COMMITTED); a
 * transaction holds one connection for its statements (Kysely). What the executor owns here is how
 * the hot statements are sent: prepared by name on each connection, or unnamed behind a
 * transaction-pooling proxy (statement-names.ts), and the declared reads and claims of one turn of
 * the event loop sent as one statement (postgres-turns.ts).
 */
import type pg from 'pg';
import type { DeclaredStatements } from './declared.js';
import { turnClaims, turnReads } from './postgres-turns.js';

/** A statement of the hot paths: its text, and the name it is prepared under on each connection. */
export interface NamedStatement {
  name: string;
  text: string;
}

export interface PostgresExecutor extends DeclaredStatements {
  readonly dialect: 'postgres';
  /** The rows of `statement` run with `values`, outside any transaction. */
  rows<Row extends object>(statement: NamedStatement, values: unknown[]): Promise<Row[]>;
  /** The pool the statements run on (its counts for /metrics; the batched readers of store/postgres/). */
  readonly pool: pg.Pool;
}

export function createPostgresExecutor(pool: pg.Pool): PostgresExecutor {
  return {
    dialect: 'postgres',
    rows: async <Row extends object>(statement: NamedStatement, values: unknown[]) => (await pool.query<Row>({ ...statement, values })).rows,
    reader: turnReads(pool),
    writer: (declared) => async (...params) => {
      await pool.query({ ...declared.postgres, values: params as unknown as unknown[] });
    },
    claimer: turnClaims(pool),
    pool,
  };
}
