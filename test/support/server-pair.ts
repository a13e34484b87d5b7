/**
 * Two `stride serve` processes on one test database, for the races only processes can show
 * (test/processes.test.ts). They name themselves alike (PUBLIC_URL), so that one DPoP proof's
 * `htu` fits either; a device's pace is 60 s, so that however long a loaded machine stalls between
 * two polls, the second is too soon.
 */
import type { Dialect } from '../../src/db/database.js';
import { freePort, startServer } from './cli.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

export const PAIR_PUBLIC_URL = 'http://stride.test';
export const PAIR_DEVICE_POLL_INTERVAL = 60;

export interface ServerPair {
  dialect: Dialect;
  /** The database both serve, open in the test's process for its setup. */
  database: TestDatabase;
  /** http://127.0.0.1:PORT of each process. */
  origins: [string, string];
  close(): Promise<void>;
}

/** Starts both processes at once; if one fails to start, the other is stopped before the error is thrown. */
export async function startServerPair(dialect: Dialect): Promise<ServerPair> {
  const database = await createTestDatabase(dialect);
  const ports = [await freePort(), await freePort()];
  const env = { DATABASE_URL: database.url, PUBLIC_URL: PAIR_PUBLIC_URL, RATE_LIMIT: 'off', DEVICE_POLL_INTERVAL: String(PAIR_DEVICE_POLL_INTERVAL) };
  const starts = await Promise.allSettled(ports.map((port) => startServer(port, env)));
  const servers = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
  const close = async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => (server.exitCode !== null ? resolve(null) : (server.once('exit', resolve), server.kill('SIGKILL'))))));
    await database.drop();
  };
  const failed = starts.find((start): start is PromiseRejectedResult => start.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  return { dialect, database, origins: ports.map((port) => `http://127.0.0.1:${port}`) as [string, string], close };
}
