/**
 * What a Takeout archive holds, found before anything is written (docs/takeout.md): the kinds it
 * has, their first and last dates and days, the zone its local times are read in and the unit of
 * its weights. Every file Stride would import is read once (inflated and parsed, one at a time),
 * counting only the local dates its entries name; an archive Stride will not read is refused here,
 * with the reason.
 */
import { isoDateOfDay } from '../../calendar/local-clock.js';
import { MAX_NAMED_SKIPS, type PreviewKind, type SkippedEntry, type TakeoutKind, type TakeoutPreview } from '../../store/takeout-imports.js';
import { ArchiveRefused, inflationProblem, openArchive, type ArchiveLimits, type OpenArchive } from './archive.js';
import { archiveFiles, shortName, type ArchiveFiles } from './files.js';
import { parseListDate } from './fitbit-times.js';
import { readProfile, type WeightUnit } from './profile.js';
import { readOffThread } from './file-reader.js';

export interface PreviewedArchive {
  preview: TakeoutPreview;
  bytes: number;
  fingerprint: string;
}

/** The archive's files, once the archive passed every check made before reading: refused otherwise. */
export async function openTakeout(path: string, limits: ArchiveLimits): Promise<{ archive: OpenArchive; files: ArchiveFiles }> {
  const archive = await openArchive(path, limits);
  try {
    const files = archiveFiles(archive.entries);
    if (!files.hasFitbitFolder) throw new ArchiveRefused('holds no Fitbit folder (Takeout/Fitbit/…): it is not a Fitbit archive of Google Takeout');
    if (files.files.length === 0) {
      throw new ArchiveRefused('holds no file Stride imports: its Fitbit/Global Export Data folder has no steps, distance, calories, heart_rate, sleep or weight file');
    }
    const problem = inflationProblem([...files.files.map((file) => file.entry), ...(files.profile ? [files.profile] : [])], limits);
    if (problem !== null) throw new ArchiveRefused(problem);
    return { archive, files };
  } catch (error) {
    archive.close();
    throw error;
  }
}

/** The local dates an entry of `kind` names (its day number), without reading its values; null when none. */
function dayOf(kind: TakeoutKind, row: unknown): number | null {
  if (typeof row !== 'object' || row === null) return null;
  const entry = row as Record<string, unknown>;
  switch (kind) {
    case 'sleep':
      return typeof entry.dateOfSleep === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(entry.dateOfSleep) ? Date.parse(`${entry.dateOfSleep}T00:00:00Z`) / 86_400_000 : null;
    case 'weight':
      return parseListDate(entry.date);
    case 'resting_heart_rate': {
      const value = entry.value as Record<string, unknown> | undefined;
      return parseListDate(value?.date) ?? parseListDate(entry.dateTime);
    }
    default:
      return parseListDate(entry.dateTime);
  }
}

/** The weight unit of weighings without a profile's word for it: weight over BMI is the height squared, in the unit's terms. */
function unitFromBmi(row: unknown): WeightUnit | null {
  const entry = row as Record<string, unknown> | null;
  const weight = Number(entry?.weight);
  const bmi = Number(entry?.bmi);
  if (!(weight > 0 && bmi > 0)) return null;
  const squaredHeight = weight / bmi;
  // Adults are 1.4–2.1 m tall: 2–4.4 m² in kg, 4.3–9.7 in lb, 0.3–0.7 in stones.
  return squaredHeight < 1 ? 'stone' : squaredHeight < 4.37 ? 'kg' : 'lb';
}

/** What the preview finds in one file: its entries and their local dates, or why it cannot be read. */
export type FileFound = { entries: number; days: number[]; bmiUnit: WeightUnit | null } | { unreadable: string };

/** One file's part of the preview (a pure function: the file reader's worker runs it). */
export function previewFile(kind: TakeoutKind, bytes: Uint8Array): FileFound {
  let list: unknown;
  try {
    list = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    return { unreadable: `is not valid JSON (${(error as Error).message})` };
  }
  if (!Array.isArray(list)) return { unreadable: 'is not a JSON list of entries' };
  const days = new Set<number>();
  let bmiUnit: WeightUnit | null = null;
  for (const row of list) {
    const day = dayOf(kind, row);
    if (day !== null) days.add(day);
    if (kind === 'weight' && bmiUnit === null) bmiUnit = unitFromBmi(row);
  }
  return { entries: list.length, days: [...days], bmiUnit };
}

/** Previews the archive at `path`; `personZone` is the Stride profile's zone. Throws ArchiveRefused. */
export async function previewArchive(path: string, personZone: string, limits: ArchiveLimits): Promise<PreviewedArchive> {
  const { archive, files } = await openTakeout(path, limits);
  try {
    const profile = files.profile ? readProfile((await archive.read(files.profile)).toString('utf8')) : { timezone: null, weightUnit: null };
    const days = new Map<TakeoutKind, Set<number>>();
    const counts = new Map<TakeoutKind, { files: number; entries: number }>();
    const unreadable: SkippedEntry[] = [];
    let bmiUnit: WeightUnit | null = null;
    for (const { kind, entry } of files.files) {
      const count = counts.get(kind) ?? { files: 0, entries: 0 };
      counts.set(kind, count);
      count.files++;
      // Parsed off the event loop: a file is up to tens of milliseconds of JSON.parse.
      const found = await readOffThread.preview(kind, await archive.read(entry));
      if ('unreadable' in found) {
        unreadable.push({ file: shortName(entry.name), entry: null, code: 'malformed_file', reason: found.unreadable });
        continue;
      }
      count.entries += found.entries;
      const dates = days.get(kind) ?? new Set<number>();
      days.set(kind, dates);
      for (const day of found.days) dates.add(day);
      if (bmiUnit === null) bmiUnit = found.bmiUnit;
    }
    const kinds: Partial<Record<TakeoutKind, PreviewKind>> = {};
    for (const [kind, count] of counts) {
      const dates = [...(days.get(kind) ?? [])].sort((a, b) => a - b);
      kinds[kind] = {
        files: count.files,
        entries: count.entries,
        days: dates.length,
        first_date: dates.length > 0 ? isoDateOfDay(dates[0]!) : null,
        last_date: dates.length > 0 ? isoDateOfDay(dates[dates.length - 1]!) : null,
      };
    }
    const weight_unit: TakeoutPreview['weight_unit'] = profile.weightUnit
      ? { unit: profile.weightUnit, from: 'archive' }
      : bmiUnit
        ? { unit: bmiUnit, from: 'bmi' }
        : { unit: 'kg', from: 'default' };
    return {
      preview: {
        timezone: profile.timezone ? { name: profile.timezone, from: 'archive' } : { name: personZone, from: 'profile' },
        weight_unit,
        kinds,
        not_read: files.notRead,
        unreadable: unreadable.slice(0, MAX_NAMED_SKIPS),
        files_total: files.files.length,
      },
      bytes: archive.bytes,
      fingerprint: archive.fingerprint,
    };
  } finally {
    archive.close();
  }
}
