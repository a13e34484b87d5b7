/**
 * Statements prepared by name on PostgreSQL, and what a transaction-pooling proxy does to them.
 *
 * The hot paths send `{ name, text, values }` to the pool (postgres-turns.ts, store/postgres/): pg
 * prepares the text once per connection under that name and remembers that it did. Behind PgBouncer in transaction
 * mode each statement may run on another server connection, so pg's memory is wrong there: the
 * name already exists on this server connection (42P05) or does not exist on it (26000). Neither
 * error comes from running the statement — it was never executed — so it is safe to send again.
 *
 * DATABASE_TRANSACTION_POOLING=true says so up front and no statement is named. Without it, the
 * first of those errors switches the pool to unnamed statements for good, the statement is sent
 * again unnamed, and `onSwitch` is told once (the operator learns which setting makes it explicit)
 * — instead of one request in ten answering 500 for as long as the process runs.
 */
import type pg from 'pg';

/** duplicate_prepared_statement, invalid_sql_statement_name (PostgreSQL error codes, appendix A). */
const LOST_PREPARED_STATEMENT = new Set(['42P05', '26000']);

const isNamed = (config: unknown): config is pg.QueryConfig & { name: string } =>
  config !== null && typeof config === 'object' && typeof (config as { name?: unknown }).name === 'string';

const unnamed = (config: pg.QueryConfig) => ({ ...config, name: undefined });

export function nameStatementsUnlessPooled(pool: pg.Pool, options: { transactionPooling: boolean; onSwitch(): void }): void {
  let pooled = options.transactionPooling;
  const query = pool.query.bind(pool) as (config: unknown, ...rest: unknown[]) => Promise<pg.QueryResult>;
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    // Named statements are sent with promises only (the hot paths); anything else passes as it is.
    if (!isNamed(config) || rest.length > 0) return query(config, ...rest);
    if (pooled) return query(unnamed(config));
    return query(config).catch((error: { code?: string }) => {
      if (!LOST_PREPARED_STATEMENT.has(error?.code ?? '')) throw error;
      if (!pooled) {
        pooled = true;
        options.onSwitch();
      }
      return query(unnamed(config));
    });
  }) as typeof pool.query;
}
