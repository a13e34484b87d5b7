/**
 * Opens the database named by DATABASE_URL: an embedded SQLite file (better-sqlite3, WAL mode) or
 * PostgreSQL (pg pool). Both are driven through one Kysely<Database>.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import { startBackgroundCheckpoints } from './background-checkpoints.js';
import { createPostgresExecutor, type PostgresExecutor } from './postgres-executor.js';
import { createSqliteExecutor, type SqliteExecutor } from './sqlite-executor.js';
import { nameStatementsUnlessPooled } from './statement-names.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

interface OpenDatabase {
  kysely: Kysely<Database>;
  close(): Promise<void>;
}

/**
 * The open database: one Kysely for both dialects (its transactions, and the statements that are
 * not on a hot path), and the dialect's executor for the hot paths (executor.ts). `sqlite` is the
 * write connection, for backups (backup.ts); statements go through Kysely or the executor.
 */
export type Db =
  | (OpenDatabase & { dialect: 'sqlite'; executor: SqliteExecutor; sqlite: SQLite.Database; pool: null })
  | (OpenDatabase & { dialect: 'postgres'; executor: PostgresExecutor; sqlite: null; pool: pg.Pool });

// int8 columns (Unix seconds) come back from pg as strings by default; every such value here fits
// in a double, so read them as numbers. COUNT(*) and SUM() also return int8/numeric.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

export interface OpenOptions {
  /** PostgreSQL only: search_path schema, used by tests to give each test a clean database. */
  schema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
  /**
   * PostgreSQL only: how long a query waits for a connection (a free one, or a new one to be
   * made) before it fails, and its request gets a 503; default CONNECT_TIMEOUT_MS.
   */
  connectTimeoutMs?: number;
  /**
   * SQLite file only: WAL checkpoints in a worker thread instead of on the committing connection
   * (background-checkpoints.ts), with what to do if that worker fails. For the long-running
   * server; a CLI command has no use for it.
   */
  backgroundCheckpoints?: { onError(error: Error): void };
  /**
   * PostgreSQL only: a transaction-pooling proxy (PgBouncer's pool_mode = transaction) is in front,
   * which hands each transaction to any server connection: statements are not prepared by name
   * (DATABASE_TRANSACTION_POOLING, docs/deployment.md).
   */
  transactionPooling?: boolean;
  /**
   * PostgreSQL only: called once if, without `transactionPooling`, the server's answers show such a
   * proxy anyway; statements are no longer prepared by name from then on (statement-names.ts).
   */
  onTransactionPoolingFound?: () => void;
}

export function openDatabase(databaseUrl: string, options: OpenOptions = {}): Db {
  if (databaseUrl.startsWith('sqlite:')) {
    return openSqlite(databaseUrl.slice('sqlite:'.length), options);
  }
  return openPostgres(databaseUrl, options);
}

function openSqlite(path: string, options: OpenOptions): Db {
  // A folder made here is the server's alone: the database holds its keys and webhook secrets.
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const handle = new SQLite(path);
  handle.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the last
  // transactions), and it keeps commits off fsync on the hot path.
  handle.pragma('synchronous = NORMAL');
  handle.pragma('foreign_keys = ON');
  // Several server processes may share one file: wait for the write lock instead of failing.
  handle.pragma('busy_timeout = 5000');
  const background = options.backgroundCheckpoints;
  const checkpoints = background && path !== ':memory:' ? startBackgroundCheckpoints(handle, path, { onError: background.onError }) : null;
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(handle) }) });
  const executor = createSqliteExecutor(path, handle, kysely);
  return {
    kysely,
    dialect: 'sqlite',
    executor,
    sqlite: handle,
    pool: null,
    async close() {
      await checkpoints?.stop();
      executor.close();
      await kysely.destroy();
    },
  };
}

/** Statements longer than this (multi-row inserts) are prepared each time, not kept. */
const MAX_CACHED_SQL_LENGTH = 2000;
const MAX_CACHED_STATEMENTS = 500;

/**
 * Kysely prepares every query it runs; SQLite's prepare (parsing and planning) cost more than the
 * query itself on the hot paths (a quarter of the CPU of a bearer GET). The SQL text Kysely builds
 * is the same for every call of a query (values are bound parameters), so the statement is kept
 * and reused. A statement still being iterated (`busy`) is never handed out twice.
 */
function withStatementCache(handle: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  let rollback: ReturnType<typeof rollbackUnlessRolledBack> | undefined;
  return {
    prepare(sqlText: string) {
      if (sqlText === 'rollback') return (rollback ??= rollbackUnlessRolledBack(handle));
      if (sqlText.length > MAX_CACHED_SQL_LENGTH) return handle.prepare(sqlText);
      let statement = statements.get(sqlText);
      if (statement === undefined || statement.busy) {
        statement = handle.prepare(sqlText);
        if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
        statements.set(sqlText, statement);
      }
      return statement;
    },
    close() {
      handle.close();
    },
  };
}

/**
 * SQLite rolls a transaction back by itself when a statement in it fails with SQLITE_FULL,
 * SQLITE_IOERR or SQLITE_NOMEM ("Response To Errors Within A Transaction", sqlite.org/lang_transaction.html).
 * A ROLLBACK would then fail with "no transaction is active", and that error would replace the one
 * that says what happened (a full disk: a 503, not a 500). This ROLLBACK does nothing then.
 */
function rollbackUnlessRolledBack(handle: SQLite.Database) {
  const statement = handle.prepare('rollback');
  return {
    reader: false,
    run(): SQLite.RunResult {
      try {
        return statement.run();
      } catch (error) {
        if (/no transaction is active/.test((error as Error).message)) return { changes: 0, lastInsertRowid: 0 };
        throw error;
      }
    },
  } as unknown as SQLite.Statement;
}

/**
 * While PostgreSQL is down or unreachable, a request waits at most this long for a connection and
 * is then answered 503, instead of waiting for as long as the outage lasts.
 */
export const CONNECT_TIMEOUT_MS = 5000;

function openPostgres(connectionString: string, options: OpenOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // TCP keepalive finds a peer that vanished without closing the connection (a host gone).
    keepAlive: true,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // A connection whose backend ends (pg_terminate_backend, a restart, a network cut) emits
  // 'error': on the pool when it was idle, on the client when it was checked out (by a Kysely
  // query or transaction, which listen to neither). Unheard, either would crash the process. The
  // query running on it, if any, fails on its own and its request gets a 503 (and logs why); the
  // pool drops the broken connection when it comes back and makes a new one on demand.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  nameStatementsUnlessPooled(pool, {
    transactionPooling: options.transactionPooling ?? false,
    onSwitch: options.onTransactionPoolingFound ?? (() => undefined),
  });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    dialect: 'postgres',
    executor: createPostgresExecutor(pool),
    sqlite: null,
    pool,
    async close() {
      await kysely.destroy();
      // Kysely ends the pool only once it has run a query itself. A process that used only the
      // statements sent to the pool directly (bearer lookups, refresh rotations) would otherwise
      // keep its idle connections, and stay alive, until the pool's idle timeout (10 s).
      if (!pool.ending) await pool.end();
    },
  };
}
