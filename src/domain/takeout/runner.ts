/**
 * The runner of Takeout imports that every server process starts (src/server.ts), beside the
 * sweep and the delivery worker: it takes the lease of a queued import — or of a running one whose
 * process stopped, and so carries it on after a restart — and runs it; then looks for the next.
 * A runner runs one import at a time. Stopping it (a server shutting down) ends the running import
 * between two steps and gives its lease back, so that another process carries it on at once.
 *
 * Beside it, the same way, it reads uploaded archives (state `reading`) to preview them: the
 * upload is answered once the file is on disk. A read is claimed with a lease like an import, so
 * any process may do it, and one whose process stopped is read again once its lease runs out. Reads
 * have a loop of their own, so that a preview does not wait for another person's import to end.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Stores } from '../../store/stores.js';
import type { TakeoutImport } from '../../store/takeout-imports.js';
import type { ArchiveLimits } from './archive.js';
import { previewStored, type PreviewEnd } from './imports.js';
import { runImport, type RunEnd, type RunSettings } from './run-import.js';

/** A name for this process's leases, unique among processes. */
export function leaseOwnerName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export interface RunnerSettings {
  leaseSeconds: number;
  coalesceSeconds: number;
  limits: ArchiveLimits;
  clock: () => number;
  /** How often an idle runner looks for an import to run. */
  pollMs?: number;
  onError?: (error: unknown, imported: TakeoutImport | null) => void;
  onProgress?: RunSettings['onProgress'];
}

export interface ImportRunner {
  /** Looks for an import now (after one was started) rather than at the next poll. */
  wake(): void;
  /** Stops between two steps, gives the running import's lease back, and resolves once stopped. */
  stop(): Promise<void>;
}

/**
 * Claims the import `importId` (or the oldest claimable) and runs it to its end or until
 * `shouldStop`; null when there was none to claim. Gives the lease back when stopped.
 */
export async function claimAndRun(stores: Stores, owner: string, settings: Omit<RunnerSettings, 'pollMs' | 'onError'> & { shouldStop?: () => boolean }, importId?: string): Promise<RunEnd | null> {
  const now = settings.clock();
  const claimed = await stores.takeoutImports.claim(owner, now, now + settings.leaseSeconds, importId);
  if (!claimed) return null;
  const end = await runImport(stores, claimed, { owner, ...settings });
  if (end === 'stopped') await stores.takeoutImports.release(claimed.id, owner);
  return end;
}

/**
 * Claims the read of the uploaded archive `importId` (or the oldest waiting) and previews it; null
 * when there was none to claim.
 */
export async function claimAndPreview(stores: Stores, owner: string, settings: Pick<RunnerSettings, 'leaseSeconds' | 'limits' | 'clock'>, importId?: string): Promise<PreviewEnd | null> {
  const now = settings.clock();
  const claimed = await stores.takeoutImports.claim(owner, now, now + settings.leaseSeconds, importId, 'preview');
  if (!claimed) return null;
  return previewStored(stores, claimed, owner, settings.limits, settings.clock);
}

/** A loop that does `work` until it finds none, then looks again every `pollMs`. */
function pollingLoop(work: (stopping: () => boolean) => Promise<unknown | null>, pollMs: number, onError: (error: unknown) => void) {
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let busy = false;

  const tick = () => {
    if (busy || stopping) return;
    busy = true;
    running = (async () => {
      try {
        // One after another while there are some to do.
        while (!stopping && (await work(() => stopping)) !== null);
      } catch (error) {
        onError(error);
      } finally {
        busy = false;
        schedule(pollMs);
      }
    })();
  };
  const schedule = (ms: number) => {
    clearTimeout(timer);
    if (!stopping) timer = setTimeout(tick, ms).unref();
  };
  schedule(0);
  return {
    wake: () => schedule(0),
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export function startImportRunner(stores: Stores, settings: RunnerSettings): ImportRunner {
  const owner = leaseOwnerName();
  const pollMs = settings.pollMs ?? 2000;
  const onError = (error: unknown) => settings.onError?.(error, null);
  const imports = pollingLoop((stopping) => claimAndRun(stores, owner, { ...settings, shouldStop: stopping }), pollMs, onError);
  const reads = pollingLoop(() => claimAndPreview(stores, owner, settings), pollMs, onError);
  return {
    wake: () => {
      reads.wake();
      imports.wake();
    },
    async stop() {
      await Promise.all([reads.stop(), imports.stop()]);
    },
  };
}
