/**
 * How the account page writes an import of a Takeout archive (docs/web.md, "Bring your Fitbit
 * history"): its kinds, its state, its progress and its report, in words for a person to read.
 */
import type { ImportView } from '../../domain/takeout/imports.js';
import { amount, dateRange } from './data-words.js';

/** The skipped entries named on the page; the report says how many more there are. */
export const SKIPS_SHOWN = 50;

const KIND_NAMES: Record<string, string> = {
  steps: 'Steps',
  distance: 'Distance',
  calories: 'Calories',
  heartrate: 'Heart rate',
  sleep: 'Sleep',
  weight: 'Weight',
  resting_heart_rate: 'Resting heart rate',
};

const STATE_WORDS: Record<ImportView['state'], string> = {
  reading: 'Reading your archive…',
  previewed: 'Read, waiting for you to confirm',
  queued: 'Waiting to start',
  running: 'Importing',
  done: 'Done',
  cancelled: 'Cancelled',
  failed: 'Failed',
  expired: 'Expired: it was not confirmed in time, and the archive was removed',
};

const ZONE_FROM = { archive: 'named by the archive (Profile.csv)', profile: 'your Stride profile’s: the archive names none this server knows' } as const;
const UNIT_FROM = { archive: 'named by the archive (Profile.csv)', bmi: 'read from the weighings and their BMI', default: 'the archive names none and its weighings carry no BMI' } as const;
const UNIT_NAMES = { kg: 'kilograms', lb: 'pounds', stone: 'stones' } as const;

export const kindName = (kind: string) => KIND_NAMES[kind] ?? kind;

/** "1.2 MiB": an archive's size, in the binary units the limit's refusal (TAKEOUT_MAX_BYTES) uses too. */
export function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${amount(value, 1)} ${units[unit]}`;
}

/** Still moving: the page reloads itself until the archive is read, and until the import ends. */
export const inProgress = (view: Pick<ImportView, 'state'>) => view.state === 'reading' || view.state === 'queued' || view.state === 'running';

/** Refused when it was read: nothing was ever found in it, nor imported. */
const refusedOnReading = (view: Pick<ImportView, 'state' | 'preview'>) => view.state === 'failed' && view.preview === null;

function stateText(view: ImportView): string {
  if (view.state === 'cancelled' && view.started_at === null) return 'Discarded before it started: nothing was imported';
  if (refusedOnReading(view)) return 'Refused: nothing was imported';
  return STATE_WORDS[view.state];
}

/**
 * What is left, guessed from the pace so far (files done since the start); null until there is a
 * pace to go by. Files differ in size, so it is a guess, and said as one.
 */
export function timeLeft(view: ImportView, now: number): string | null {
  const { percent } = view.progress;
  if (view.state !== 'running' || view.started_at === null || percent <= 0 || percent >= 100) return null;
  const elapsed = Math.max(0, now - view.started_at);
  const seconds = (elapsed * (100 - percent)) / percent;
  if (seconds < 60) return 'less than a minute';
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `about ${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `about ${amount(seconds / 3600, 1)} hours`;
}

/** The page's words for an import. */
export function importPageData(view: ImportView, now: number) {
  const preview = view.preview;
  const skipped = view.report.skipped;
  const refused = refusedOnReading(view);
  return {
    id: view.id,
    state: view.state,
    stateText: stateText(view),
    reading: view.state === 'reading',
    refused,
    expired: view.state === 'expired',
    cancelRequested: view.cancel_requested,
    error: view.error,
    archiveName: view.archive.name,
    archiveSize: bytesText(view.archive.bytes),
    zone: preview ? { name: preview.timezone.name, from: ZONE_FROM[preview.timezone.from] } : null,
    unit: preview ? { name: UNIT_NAMES[preview.weight_unit.unit], from: UNIT_FROM[preview.weight_unit.from] } : null,
    found: Object.entries(preview?.kinds ?? {}).map(([kind, found]) => ({
      name: kindName(kind),
      files: amount(found!.files),
      entries: amount(found!.entries),
      days: amount(found!.days),
      dates: found!.first_date && found!.last_date ? dateRange(found!.first_date, found!.last_date) : '—',
    })),
    notRead: Object.entries(preview?.not_read ?? {}).map(([kind, files]) => ({ kind, files: amount(files) })),
    unreadable: (preview?.unreadable ?? []).map((entry) => ({ file: entry.file, reason: entry.reason })),
    percent: view.progress.percent,
    filesDone: amount(view.progress.files_done),
    filesTotal: amount(view.progress.files_total),
    kindsProgress: view.progress.kinds.map((k) => ({ name: kindName(k.kind), done: amount(k.days_done), total: amount(k.days_total) })),
    timeLeft: timeLeft(view, now),
    report: view.report.kinds.map((k) => ({
      name: kindName(k.kind),
      days: amount(k.days_imported),
      dates: k.first_date && k.last_date ? dateRange(k.first_date, k.last_date) : '—',
      written: amount(k.written),
      kept: amount(k.kept),
      skipped: amount(k.skipped),
      note: k.note ?? null,
    })),
    skippedTotal: skipped.total,
    skippedByCode: Object.entries(skipped.by_code).map(([code, count]) => ({ code, count: amount(count) })),
    skips: skipped.entries.slice(0, SKIPS_SHOWN).map((entry) => ({ file: entry.file, entry: entry.entry === null ? 'the whole file' : String(entry.entry), code: entry.code, reason: entry.reason })),
    skipsNotShown: Math.max(0, skipped.total - Math.min(SKIPS_SHOWN, skipped.entries.length)),
    canStart: view.state === 'previewed' && preview !== null,
    canDiscard: view.state === 'reading',
    canCancel: (view.state === 'queued' || view.state === 'running') && !view.cancel_requested,
    // Progress is shown of an import that started (or was queued): not of an archive refused, discarded or expired unread.
    showsProgress: !refused && view.state !== 'expired' && !(view.state === 'cancelled' && view.report.kinds.length === 0),
    ended: view.state === 'done' || view.state === 'cancelled' || view.state === 'failed' || view.state === 'expired',
  };
}

/** A line of the account page's list of imports. */
export function importListItem(view: ImportView) {
  return { id: view.id, name: view.archive.name, state: STATE_WORDS[view.state], percent: view.progress.percent, moving: inProgress(view) };
}
