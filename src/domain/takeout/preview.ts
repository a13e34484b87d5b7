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
