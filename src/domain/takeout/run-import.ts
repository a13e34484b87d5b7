/**
 * Running an import of a Takeout archive (docs/takeout.md): file after file in the import's order,
 * each file read into steps (one kind of one local date), each step written by its kind's store
 * with the import's position, report and waiting changes in the same transaction (steps whose
 * minutes share a UTC day row together, step-groups.ts) — so that the import resumes exactly after
 * its last step, from any process, and gives what an uninterrupted run gives. The run holds the
 * import's lease and renews it at every write; it stops between two writes when asked (a server
 * shutting down: the lease is given back) or when the person cancels (the import ends, what was
 * written stays), and ends the import when the last file is done.
 */
import { rm } from 'node:fs/promises';
import type { Stores } from '../../store/stores.js';
import { ImportLeaseLost, type ImportStep, type PendingChange, type TakeoutImport, type TakeoutKind } from '../../store/takeout-imports.js';
import { dataChange, profileZone } from '../local-dates.js';
import { minutesChange } from '../minute-samples.js';
import { ArchiveRefused, type ArchiveLimits } from './archive.js';
import { shortName } from './files.js';
import { openTakeout } from './preview.js';
import type { ReadStep } from './read-files.js';
import { readOffThread } from './file-reader.js';
import { stepGroups } from './step-groups.js';

export interface RunSettings {
  /** Who runs it: the lease's owner. */
  owner: string;
  leaseSeconds: number;
  coalesceSeconds: number;
  limits: ArchiveLimits;
  clock: () => number;
  /** After every step: where the import stands. */
  onProgress?: (progress: RunProgress) => void;
  /** Asked before every step: true stops the run there (the lease is given back). */
  shouldStop?: () => boolean;
}

export interface RunProgress {
  importId: string;
  kind: TakeoutKind;
  /** Files done, of filesTotal. */
  filesDone: number;
  filesTotal: number;
}

/** How a run ended: the import finished (done, cancelled or failed), the run was asked to stop, or another process holds the import. */
export type RunEnd = 'finished' | 'stopped' | 'lost';

/** The change an import's write tells, once, at the end: the dates of the minutes written in the person's zone, and a range per date covering them. */
function coveringChange(personZone: string) {
  return (written: readonly number[]): PendingChange => minutesChange(written, personZone);
}

/** A step as read, and as noted. */
interface StepToWrite {
  read: ReadStep;
  step: ImportStep;
}

/** The records of steps of one kind of minutes (a group holds steps of one file, so of one kind). */
function partsOf<T>(group: readonly StepToWrite[], records: (read: ReadStep) => readonly T[]) {
  return group.map(({ read, step }) => ({ records: records(read), step }));
}

const samplesOf = (read: ReadStep) => (read.kind === 'steps' || read.kind === 'distance' || read.kind === 'calories' ? read.samples : []);
const minutesOf = (read: ReadStep) => (read.kind === 'heartrate' ? read.minutes : []);

/**
 * Writes a group of steps (step-groups.ts) through their kind's store, in one transaction with
 * their notes; a step without records is noted alone.
 */
async function writeSteps(stores: Stores, userId: string, personZone: string, group: readonly StepToWrite[], now: number): Promise<void> {
  const changeOf = coveringChange(personZone);
  const dateOf = dataChange(personZone, now, 0).dateOf;
  const { read, step } = group[0]!;
  switch (read.kind) {
    case 'steps':
    case 'distance':
    case 'calories':
      if (group.some((part) => samplesOf(part.read).length > 0)) return void (await stores[read.kind].fillSamples(userId, partsOf(group, samplesOf), changeOf));
      break;
    case 'heartrate':
      if (group.some((part) => minutesOf(part.read).length > 0)) return void (await stores.heartRate.fillSamples(userId, partsOf(group, minutesOf), changeOf));
      break;
    case 'sleep':
      if (read.sessions.length > 0) return void (await stores.sleep.addNew(userId, read.sessions, { ...step, names: read.names }, dateOf));
      break;
    case 'weight':
      if (read.weights.length > 0) return void (await stores.bodyWeight.addNew(userId, read.weights, { ...step, names: read.names }, dateOf));
      break;
    case 'resting_heart_rate':
    case 'unread':
      break;
  }
  await stores.takeoutImports.noteStep(userId, step);
}

/** Removes an archive the server stored for the import, once the import has ended. */
async function removeOwnedArchive(imported: TakeoutImport): Promise<void> {
  if (imported.ownsArchive) await rm(imported.archivePath, { force: true });
}

/** Ends the import and forgets its archive if the server stored it. */
async function finish(stores: Stores, imported: TakeoutImport, settings: RunSettings, state: 'done' | 'cancelled' | 'failed', error: string | null): Promise<RunEnd> {
  const ended = await stores.takeoutImports.finish(imported.id, settings.owner, state, error, settings.clock(), settings.coalesceSeconds);
  if (!ended) return 'lost';
  await removeOwnedArchive(imported);
  return 'finished';
}

/**
 * Runs the import `imported`, whose lease `settings.owner` holds (claimed by the caller), from
 * where it stands to its end, or until asked to stop.
 */
export async function runImport(stores: Stores, imported: TakeoutImport, settings: RunSettings): Promise<RunEnd> {
  const person = await stores.users.findById(imported.userId);
  if (!person) return 'lost';
  const personZone = profileZone(person.timezone);
  let opened;
  try {
    opened = await openTakeout(imported.archivePath, settings.limits);
  } catch (error) {
    if (!(error instanceof ArchiveRefused)) throw error;
    return finish(stores, imported, settings, 'failed', `the archive ${error.message}`);
  }
  const { archive, files } = opened;
  try {
    if (imported.preview === null || archive.fingerprint !== imported.archiveFingerprint || files.files.length !== imported.filesTotal) {
      return finish(stores, imported, settings, 'failed', 'the archive on disk is no longer the one previewed; preview it again');
    }
    const context = { zone: imported.timezone, now: imported.createdAt, weightUnit: imported.preview.weight_unit.unit };
    for (let fileIndex = imported.nextFile; fileIndex < files.files.length; fileIndex++) {
      const { kind, entry } = files.files[fileIndex]!;
      const file = shortName(entry.name);
      let steps: ReadStep[];
      try {
        // Parsed and checked off the event loop: a file is up to tens of milliseconds of work.
        steps = await readOffThread.read(kind, await archive.read(entry), { ...context, file });
      } catch (error) {
        if (!(error instanceof ArchiveRefused)) throw error;
        steps = [{ kind: 'unread', of: kind, day: null, entries: 0, skipped: [{ file, entry: null, code: 'unreadable_file', reason: `could not be read: the archive ${error.message}` }] }];
      }
      if (steps.length === 0) steps = [{ kind: 'unread', of: kind, day: null, entries: 0, skipped: [] }];
      const firstPart = fileIndex === imported.nextFile ? imported.nextPart : 0;
      for (const [first, end] of stepGroups(steps, firstPart)) {
        if (settings.shouldStop?.()) return 'stopped';
        if (await stores.takeoutImports.cancelRequested(imported.id)) return finish(stores, imported, settings, 'cancelled', null);
        const now = settings.clock();
        const group = steps.slice(first, end).map((read, i): StepToWrite => {
          const part = first + i;
          const last = part === steps.length - 1;
          const step: ImportStep = {
            importId: imported.id,
            leaseOwner: settings.owner,
            leaseUntil: now + settings.leaseSeconds,
            now,
            position: last ? { file: fileIndex + 1, part: 0 } : { file: fileIndex, part: part + 1 },
            kind,
            endsFile: last,
            entries: read.entries,
            day: read.day,
            skipped: read.skipped,
          };
          return { read, step };
        });
        await writeSteps(stores, imported.userId, personZone, group, now);
      }
      settings.onProgress?.({ importId: imported.id, kind, filesDone: fileIndex + 1, filesTotal: files.files.length });
    }
    return finish(stores, imported, settings, 'done', null);
  } catch (error) {
    if (error instanceof ImportLeaseLost) return 'lost';
    throw error;
  } finally {
    archive.close();
  }
}
