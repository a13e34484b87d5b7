/**
 * A person's imports of Google Takeout archives, as the account page and `stride import --takeout`
 * use them (docs/takeout.md, "The API of imports"): preview an archive on disk, start the import,
 * follow its progress, cancel it, read its report. Every function takes the person's id and
 * answers only for that person's imports: another person's import is "not found".
 */
import { rm } from 'node:fs/promises';
import type { Stores } from '../../store/stores.js';
import { daysIn, TAKEOUT_KINDS, type KindTally, type SkippedTally, type TakeoutImport, type TakeoutKind, type TakeoutPreview } from '../../store/takeout-imports.js';
import { isoDateOfDay } from '../../calendar/local-clock.js';
import { profileZone } from '../local-dates.js';
import { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from './archive.js';
import { previewArchive } from './preview.js';
import { ArchiveRefused } from './archive.js';

export { ArchiveRefused };

/** The archive of an import, as the caller has it on disk. */
export interface ArchiveOnDisk {
  path: string;
  /** The name shown to the person (the upload's file name). */
  name: string;
  /** True when the server stored the archive for this import: it is removed when the import ends. */
  ownedByServer: boolean;
}

/** The limits an archive is read within: DEFAULT_ARCHIVE_LIMITS with the operator's TAKEOUT_MAX_BYTES. */
export function archiveLimits(maxArchiveBytes: number): ArchiveLimits {
  return { ...DEFAULT_ARCHIVE_LIMITS, maxArchiveBytes };
}

/**
 * Reads the archive and records a previewed import of it for the person (nothing is written of
 * their data). Throws ArchiveRefused, whose message says why, for an archive Stride will not read.
 */
export async function previewImport(stores: Stores, person: { id: string; timezone: string }, archive: ArchiveOnDisk, limits: ArchiveLimits, now: number): Promise<TakeoutImport> {
  const previewed = await previewArchive(archive.path, profileZone(person.timezone), limits);
  return stores.takeoutImports.create({
    userId: person.id,
    archivePath: archive.path,
    archiveName: archive.name,
    archiveBytes: previewed.bytes,
    archiveFingerprint: previewed.fingerprint,
    ownsArchive: archive.ownedByServer,
    timezone: previewed.preview.timezone.name,
    preview: previewed.preview,
    now,
  });
}

/**
 * Records an archive the person just stored, to be read by a runner in the background
 * (`previewStored`): the upload is answered at once, and the page shows "Reading your archive…"
 * until the preview is there. Nothing is read here.
 */
export async function importToRead(stores: Stores, person: { id: string; timezone: string }, archive: ArchiveOnDisk & { bytes: number }, now: number): Promise<TakeoutImport> {
  return stores.takeoutImports.createReading({
    userId: person.id,
    archivePath: archive.path,
    archiveName: archive.name,
    archiveBytes: archive.bytes,
    ownsArchive: archive.ownedByServer,
    timezone: profileZone(person.timezone),
    now,
  });
}

/** How a background read of an archive ended: previewed, refused (its import failed, the archive removed), or no longer this process's to end. */
export type PreviewEnd = 'previewed' | 'refused' | 'lost';

/**
 * Reads the archive of an import in state `reading` whose lease `owner` holds (claimed by a
 * runner), and records its preview — or its refusal, whose reason the page shows; the refused
 * archive is removed at once when the server stored it. Other errors (a disk failing) are thrown:
 * the lease runs out and a runner reads it again.
 */
export async function previewStored(stores: Stores, imported: TakeoutImport, owner: string, limits: ArchiveLimits, clock: () => number): Promise<PreviewEnd> {
  let previewed;
  try {
    previewed = await previewArchive(imported.archivePath, imported.timezone, limits);
  } catch (error) {
    if (!(error instanceof ArchiveRefused)) throw error;
    const refused = await stores.takeoutImports.previewRefused(imported.id, owner, `the archive ${error.message}`, clock());
    if (refused && imported.ownsArchive) await rm(imported.archivePath, { force: true });
    return refused ? 'refused' : 'lost';
  }
  const found = { archiveBytes: previewed.bytes, archiveFingerprint: previewed.fingerprint, timezone: previewed.preview.timezone.name, preview: previewed.preview };
  return (await stores.takeoutImports.previewFound(imported.id, owner, found, clock())) ? 'previewed' : 'lost';
}

/**
 * The sweep's part (src/server.ts): imports the person never confirmed — read, or still waiting
 * to be read, `keptSeconds` after their upload or preview — are marked `expired` and the archives
 * the server stored for them removed, so that an abandoned upload does not stay on disk.
 */
export async function expireUnconfirmedImports(stores: Stores, now: number, keptSeconds: number): Promise<TakeoutImport[]> {
  return stores.takeoutImports.expireUnconfirmed(now - keptSeconds, now, async (imported) => {
    if (imported.ownsArchive) await rm(imported.archivePath, { force: true });
  });
}

/** Why an import could not start, in a sentence for the person; null when it was queued. */
export async function startImport(stores: Stores, userId: string, id: string, now: number): Promise<{ queued: TakeoutImport } | { refused: string; status: 404 | 409 }> {
  const outcome = await stores.takeoutImports.start(userId, id, now);
  if ('started' in outcome) return { queued: outcome.started };
  if ('notFound' in outcome) return { refused: 'no such import', status: 404 };
  if ('busy' in outcome) return { refused: `another import (${outcome.busy.id}, of ${outcome.busy.archiveName}) is ${outcome.busy.state}: one import at a time`, status: 409 };
  return { refused: `the import is ${outcome.notPreviewed.state}; only a previewed import can start`, status: 409 };
}

/** Cancels the person's import; what it wrote stays. Null when they have none by that id. */
export async function cancelImport(stores: Stores, userId: string, id: string, now: number, coalesceSeconds: number): Promise<TakeoutImport | null> {
  const outcome = await stores.takeoutImports.cancel(userId, id, now, coalesceSeconds);
  if ('notFound' in outcome) return null;
  const imported = 'cancelling' in outcome ? outcome.cancelling : outcome.finished;
  // A previewed or queued import ends here, with no runner to forget the archive the server stored.
  if (imported.state === 'cancelled' && imported.ownsArchive) await rm(imported.archivePath, { force: true });
  return imported;
}

/** The person's import, as the page shows it; null when they have none by that id. */
export async function importOf(stores: Stores, userId: string, id: string): Promise<ImportView | null> {
  const found = await stores.takeoutImports.get(userId, id);
  return found ? importView(found) : null;
}

/** The person's imports, newest first, as the page shows them. */
export async function importsOf(stores: Stores, userId: string, limit = 20): Promise<ImportView[]> {
  return (await stores.takeoutImports.list(userId, limit)).map(importView);
}

/** One kind of the report. */
export interface KindReportView {
  kind: TakeoutKind;
  files: number;
  entries: number;
  /** Local dates on which something was written. */
  days_imported: number;
  first_date: string | null;
  last_date: string | null;
  /** Minutes, sessions or weighings written. */
  written: number;
  /** Of the archive's records, those the person already held: kept as stored. */
  kept: number;
  skipped: number;
  /** Said of a kind read but not stored. */
  note?: string;
}

/** The progress of one kind: its dates read of those the preview found. */
export interface KindProgressView {
  kind: TakeoutKind;
  days_done: number;
  days_total: number;
}

/** An import as the account page and the CLI show it (docs/takeout.md). */
export interface ImportView {
  id: string;
  state: TakeoutImport['state'];
  archive: { name: string; bytes: number };
  /** True once the person asked to cancel a running import (it ends at its next step). */
  cancel_requested: boolean;
  error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** Null while the archive is read (`reading`), and when it was refused then. */
  preview: TakeoutPreview | null;
  progress: { files_done: number; files_total: number; percent: number; kinds: KindProgressView[] };
  report: { kinds: KindReportView[]; not_read: Record<string, number>; skipped: SkippedTally };
}

const RESTING_NOTE = 'read, not stored: Stride finds each day\'s resting heart rate from the minutes of heart rate';

function kindReport(kind: TakeoutKind, tally: KindTally): KindReportView {
  const runs = tally.days_written;
  return {
    kind,
    files: tally.files,
    entries: tally.entries,
    days_imported: daysIn(runs),
    first_date: runs.length > 0 ? isoDateOfDay(runs[0]![0]) : null,
    last_date: runs.length > 0 ? isoDateOfDay(runs[runs.length - 1]![1] - 1) : null,
    written: tally.written,
    kept: tally.kept,
    skipped: tally.skipped,
    ...(kind === 'resting_heart_rate' ? { note: RESTING_NOTE } : {}),
  };
}

export function importView(imported: TakeoutImport): ImportView {
  const preview = imported.preview;
  const kinds = TAKEOUT_KINDS.filter((kind) => preview?.kinds[kind] !== undefined);
  const tallies = imported.report.kinds;
  return {
    id: imported.id,
    state: imported.state,
    archive: { name: imported.archiveName, bytes: imported.archiveBytes },
    cancel_requested: imported.cancelRequested,
    error: imported.error,
    created_at: imported.createdAt,
    started_at: imported.startedAt,
    finished_at: imported.finishedAt,
    preview: imported.preview,
    progress: {
      files_done: imported.nextFile,
      files_total: imported.filesTotal,
      percent: imported.filesTotal === 0 ? 100 : Math.floor((100 * imported.nextFile) / imported.filesTotal),
      kinds: kinds.map((kind) => ({ kind, days_done: daysIn(tallies[kind]?.days_read ?? []), days_total: preview!.kinds[kind]!.days })),
    },
    report: {
      kinds: kinds.filter((kind) => tallies[kind] !== undefined).map((kind) => kindReport(kind, tallies[kind]!)),
      not_read: imported.report.not_read,
      skipped: imported.report.skipped,
    },
  };
}
