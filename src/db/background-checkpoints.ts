/**
 * SQLite WAL checkpoints off the event loop. A checkpoint copies the pages that commits appended
 * to the write-ahead log back into the database file and fsyncs both; run by the committing
 * connection — SQLite's default, after the commit that takes the log past 1,000 pages — it stalls
 * every request queued behind it (under refresh-token rotations, 5 % of the event loop's time).
 *
 * Here a worker thread with its own connection (checkpoint-worker.ts) checkpoints every 100 ms.
 * The server's connection keeps an automatic checkpoint at a larger size as a backstop: while
 * writes never pause, the worker's checkpoints never catch up with the last commit, and the log can
 * only start over from its beginning after a checkpoint that did; the backstop is that checkpoint,
 * with nearly every page already copied by the worker. The log stays under the backstop's size.
 * If the worker fails, the server's connection goes back to SQLite's default.
 */
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** SQLite's default wal_autocheckpoint, in pages. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export interface BackgroundCheckpointOptions {
  intervalMs?: number;
  /** The server connection's own automatic checkpoint, in pages of log (4 KiB each). */
  backstopPages?: number;
  /** Told when the worker fails (after the server connection took checkpoints back). */
  onError?: (error: Error) => void;
}

export interface BackgroundCheckpoints {
  /** Stops the worker and closes its connection. */
  stop(): Promise<void>;
}

export function startBackgroundCheckpoints(
  handle: SQLite.Database,
  path: string,
  { intervalMs = 100, backstopPages = 10_000, onError }: BackgroundCheckpointOptions = {},
): BackgroundCheckpoints {
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: { path, intervalMs },
    // It runs one pragma every interval: a small heap is plenty.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  // The checkpoints never keep the process alive.
  worker.unref();
  handle.pragma(`wal_autocheckpoint = ${backstopPages}`);
  let stopped = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.once('error', (error) => {
    if (stopped || !handle.open) return;
    handle.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    onError?.(error);
  });
  return {
    async stop() {
      if (stopped) return exited;
      stopped = true;
      // Waiting for the worker's exit keeps the process alive until it has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      return exited;
    },
  };
}
