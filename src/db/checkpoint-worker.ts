/**
 * The worker thread of background-checkpoints.ts: its own connection to the SQLite file, copying
 * the write-ahead log back into the database every `intervalMs`. PASSIVE checkpoints never wait
 * for, nor block, the server's readers and writers; one that meets another connection's checkpoint
 * (another server process on the same file) just tries again at the next interval.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };

function openDatabase(): SQLite.Database {
  try {
    const db = new SQLite(path, { fileMustExist: true });
    db.pragma('busy_timeout = 0');
    return db;
  } catch (error) {
    // better-sqlite3's own error class would reach the parent thread without its message.
    const { message, code } = error as { message?: string; code?: string };
    throw new Error(`cannot open ${path} for checkpoints: ${message ?? String(error)}${code ? ` (${code})` : ''}`);
  }
}

const db = openDatabase();

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // SQLITE_BUSY from a concurrent checkpoint: the next interval tries again.
  }
}, intervalMs);

parentPort!.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
