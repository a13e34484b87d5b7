/**
 * Which database errors mean "the database cannot be reached or written for now" — a fault of the
 * deployment that ends by itself or by an operator's hand (PostgreSQL restarting or failing over,
 * its backends terminated, the network gone; a SQLite disk full or remounted read-only) — rather
 * than a bug. Such a request is answered 503 `temporarily_unavailable` with Retry-After and may be
 * sent again as it is (docs/operations.md, "When a dependency goes away").
 */

/**
 * PostgreSQL SQLSTATEs (Appendix A of its manual): class 08 connection exceptions; 57P01–57P03
 * admin_shutdown, crash_shutdown, cannot_connect_now (starting up, shutting down, in recovery);
 * class 53 insufficient resources (disk full, out of memory, too many connections); 25006
 * read_only_sql_transaction (a primary turned standby).
 */
const POSTGRES_STATES = /^(08...|57P0[123]|53...|25006)$/;

/** Node's socket errors while connecting to or talking with PostgreSQL. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLite result codes (better-sqlite3 puts the extended name in `code`): the disk is full, the
 * file or its folder became read-only or cannot be opened, the OS failed a read or write, or
 * another process held the write lock longer than busy_timeout.
 */
const SQLITE_CODES = /^SQLITE_(FULL|READONLY|CANTOPEN|IOERR|BUSY)(_|$)/;

/** What node-postgres throws, with no code, when a connection dies or cannot be made in time. */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, message, errors, cause } = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && (POSTGRES_STATES.test(code) || SOCKET_CODES.has(code) || SQLITE_CODES.test(code))) return true;
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message)) return true;
  // Connecting to a host name with several addresses fails with an AggregateError of each attempt.
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}
