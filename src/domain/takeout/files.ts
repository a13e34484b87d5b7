/**
 * Which entries of a Takeout archive Stride reads (docs/takeout.md): the files of Fitbit's
 * "Global Export Data" folder whose kind Stride holds — `steps-2024-01-01.json` and the like — and
 * the profile, `Your Profile/Profile.csv`. Other Fitbit files are counted by kind and never read;
 * files outside the Fitbit folder (other Google products in the same archive) are ignored.
 */
import type { ArchiveEntry } from './archive.js';
import { TAKEOUT_KINDS, type TakeoutKind } from '../../store/takeout-imports.js';

/** The file name prefix of each kind Stride reads. */
const PREFIX_KIND: Readonly<Record<string, TakeoutKind>> = {
  steps: 'steps',
  distance: 'distance',
  calories: 'calories',
  heart_rate: 'heartrate',
  resting_heart_rate: 'resting_heart_rate',
  sleep: 'sleep',
  weight: 'weight',
};

const FITBIT_FOLDER = /(?:^|\/)Fitbit\//;
const EXPORT_FILE = /(?:^|\/)Fitbit\/Global Export Data\/([A-Za-z_]+)-(\d{4}-\d{2}-\d{2})\.json$/;
const PROFILE_FILE = /(?:^|\/)Fitbit\/(?:Your Profile|Profile)\/Profile\.csv$/;

/** Kinds of files not read that are counted by name; the rest are counted as `other`. */
const MAX_NOT_READ_NAMES = 50;

/** A file the import reads, with its kind. */
export interface KindFile {
  kind: TakeoutKind;
  entry: ArchiveEntry;
}

export interface ArchiveFiles {
  /** The files to read, in the import's order: kind by kind (TAKEOUT_KINDS), each kind by name (so by date). */
  files: KindFile[];
  profile: ArchiveEntry | null;
  /** Files of Fitbit's folder Stride does not read, counted by kind (the name before its date, or its folder). */
  notRead: Record<string, number>;
  /** Whether any entry lies in a Fitbit folder. */
  hasFitbitFolder: boolean;
}

/** Sorts the archive's entries into what is read and what is not. */
export function archiveFiles(entries: readonly ArchiveEntry[]): ArchiveFiles {
  const files: KindFile[] = [];
  const notRead: Record<string, number> = {};
  let profile: ArchiveEntry | null = null;
  let hasFitbitFolder = false;
  for (const entry of entries) {
    if (!FITBIT_FOLDER.test(entry.name)) continue;
    hasFitbitFolder = true;
    if (PROFILE_FILE.test(entry.name)) {
      profile ??= entry;
      continue;
    }
    const match = EXPORT_FILE.exec(entry.name);
    const kind = match ? PREFIX_KIND[match[1]!] : undefined;
    if (kind) {
      files.push({ kind, entry });
      continue;
    }
    const named = match ? match[1]! : folderOf(entry.name);
    // An archive of many odd names is counted under a few, so its report stays small.
    const what = named in notRead || Object.keys(notRead).length < MAX_NOT_READ_NAMES ? named : 'other';
    notRead[what] = (notRead[what] ?? 0) + 1;
  }
  const order = (kind: TakeoutKind) => TAKEOUT_KINDS.indexOf(kind);
  files.sort((a, b) => order(a.kind) - order(b.kind) || (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0));
  return { files, profile, notRead, hasFitbitFolder };
}

/** The folder of a Fitbit file Stride does not read (`Sleep Score`), or its name in Global Export Data. */
function folderOf(name: string): string {
  const parts = name.slice(name.search(FITBIT_FOLDER)).split('/').filter((part) => part !== '' && part !== 'Fitbit');
  if (parts[0] === 'Global Export Data') return (parts[1] ?? '').replace(/\.[a-z]+$/i, '').replace(/-\d{4}-\d{2}-\d{2}$/, '');
  return parts[0] ?? name;
}

/** The archive's name for a file in messages: its path after the Fitbit folder. */
export function shortName(entryName: string): string {
  const at = entryName.search(FITBIT_FOLDER);
  return at < 0 ? entryName : entryName.slice(at).replace(/^\//, '');
}
