/**
 * A Takeout archive as Stride reads it (docs/takeout.md): a zip file on disk, never extracted and
 * never held in memory. Its central directory is read first and the archive is refused whole,
 * before any entry is inflated, when it is too large, not a zip (or cut short: the directory is
 * at its end), holds an entry whose name leaves the archive (`../`, an absolute path), or an entry
 * that would inflate beyond the limits (a zip bomb). Entries are then read one at a time, each as
 * a stream whose inflated size yauzl holds to the size the directory declares.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import yauzl from 'yauzl';

/** An archive Stride will not read, with the reason in a sentence. */
export class ArchiveRefused extends Error {}

export interface ArchiveLimits {
  /** The archive's own size on disk (TAKEOUT_MAX_BYTES). */
  maxArchiveBytes: number;
  /** The inflated size of one entry Stride reads: each is read whole before it is parsed. */
  maxEntryBytes: number;
  /** The inflated size of all the entries Stride reads. */
  maxTotalBytes: number;
  /** How many times its compressed size an entry may inflate to (past MIN_RATIO_CHECK_BYTES). */
  maxRatio: number;
  /** Entries in the directory. */
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxArchiveBytes: 4 * 1024 ** 3,
  // A day of heart rate read every second is about 6.5 MB of JSON; a month of minutes 2 MB.
  maxEntryBytes: 64 * 1024 ** 2,
  maxTotalBytes: 32 * 1024 ** 3,
  // Fitbit's JSON deflates 10–40 times; deflate itself cannot go past about 1,030.
  maxRatio: 200,
  maxEntries: 200_000,
};

/** Small entries may deflate very well (a file of zeros) and cost nothing. */
const MIN_RATIO_CHECK_BYTES = 1024 ** 2;

/** One file of the archive, as its central directory describes it. */
export interface ArchiveEntry {
  /** The entry's path in the archive (`Takeout/Fitbit/Global Export Data/steps-2024-01-01.json`). */
  name: string;
  compressedBytes: number;
  bytes: number;
}

export interface OpenArchive {
  /** The file entries (folders left out), in the directory's order. */
  entries: readonly ArchiveEntry[];
  /** The archive's size on disk. */
  bytes: number;
  /** A digest of the directory (names, sizes, checksums): an archive replaced on disk reads differently. */
  fingerprint: string;
  /** The entry's inflated bytes, read whole (each is at most maxEntryBytes). */
  read(entry: ArchiveEntry): Promise<Buffer>;
  close(): void;
}

const ZIP_ERRORS: ReadonlyArray<[RegExp, string]> = [
  [/end of central directory record signature not found/i, 'is not a zip archive, or it was cut short (its directory, at its end, is missing)'],
  [/^absolute path: (.*)$/, 'holds an entry with an absolute path, "$1"; a Takeout archive has none, so it is refused (entries are never extracted)'],
  [/^invalid relative path: (.*)$/, 'holds an entry whose name leaves the archive, "$1"; a Takeout archive has none, so it is refused (entries are never extracted)'],
  [/^invalid characters in fileName: (.*)$/, 'holds an entry with a name no file can have, "$1"'],
];

/** The operator's words for what yauzl found wrong with the zip. */
function refusalOf(error: unknown): ArchiveRefused {
  const message = error instanceof Error ? error.message : String(error);
  for (const [pattern, words] of ZIP_ERRORS) {
    const match = pattern.exec(message);
    if (match) return new ArchiveRefused(words.replace('$1', match[1] ?? ''));
  }
  return new ArchiveRefused(`is not a readable zip archive (${message})`);
}

/** Opens the archive at `path` and reads its directory; throws ArchiveRefused. */
export async function openArchive(path: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<OpenArchive> {
  let bytes: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new ArchiveRefused('is not a file');
    bytes = info.size;
  } catch (error) {
    if (error instanceof ArchiveRefused) throw error;
    throw new ArchiveRefused(`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (bytes > limits.maxArchiveBytes) {
    throw new ArchiveRefused(`is ${formatBytes(bytes)}, more than the ${formatBytes(limits.maxArchiveBytes)} an archive may be (TAKEOUT_MAX_BYTES); ask Takeout for smaller parts`);
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  } catch (error) {
    throw refusalOf(error);
  }
  try {
    if (zip.entryCount > limits.maxEntries) throw new ArchiveRefused(`holds ${zip.entryCount} entries, more than ${limits.maxEntries}`);
    const kept = new Map<ArchiveEntry, yauzl.Entry>();
    const digest = createHash('sha256');
    try {
      for await (const entry of zip.eachEntry()) {
        digest.update(`${entry.fileName}\0${entry.compressedSize}\0${entry.uncompressedSize}\0${entry.crc32}\n`);
        if (entry.fileName.endsWith('/')) continue;
        kept.set({ name: entry.fileName, compressedBytes: entry.compressedSize, bytes: entry.uncompressedSize }, entry);
      }
    } catch (error) {
      throw refusalOf(error);
    }
    return {
      entries: [...kept.keys()],
      bytes,
      fingerprint: digest.digest('base64url'),
      read: (entry) => readEntry(zip, kept.get(entry)!, entry),
      close: () => zip.close(),
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}

/**
 * Why the entries Stride will read cannot be read safely — one inflating beyond the limits, or all
 * of them together — or null. Checked on the directory's sizes, before anything is inflated.
 */
export function inflationProblem(entries: readonly ArchiveEntry[], limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): string | null {
  let total = 0;
  for (const entry of entries) {
    if (entry.bytes > limits.maxEntryBytes) return `its entry "${entry.name}" inflates to ${formatBytes(entry.bytes)}, more than the ${formatBytes(limits.maxEntryBytes)} one file may be`;
    if (entry.bytes > MIN_RATIO_CHECK_BYTES && entry.bytes > entry.compressedBytes * limits.maxRatio) {
      return `its entry "${entry.name}" inflates ${Math.round(entry.bytes / Math.max(1, entry.compressedBytes))} times (to ${formatBytes(entry.bytes)}), more than the ${limits.maxRatio} times data of a Takeout archive does: a zip bomb`;
    }
    total += entry.bytes;
  }
  if (total > limits.maxTotalBytes) return `its files inflate to ${formatBytes(total)} together, more than ${formatBytes(limits.maxTotalBytes)}`;
  return null;
}

async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, described: ArchiveEntry): Promise<Buffer> {
  let stream;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (error) {
    throw new ArchiveRefused(`cannot read its entry "${described.name}" (${error instanceof Error ? error.message : String(error)})`);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      length += chunk.length;
      // validateEntrySizes stops a stream that outgrows its declared size; this bounds it regardless.
      if (length > described.bytes) throw new Error(`more bytes than the ${described.bytes} its directory declares`);
      chunks.push(chunk);
    }
  } catch (error) {
    stream.destroy();
    throw new ArchiveRefused(`cannot read its entry "${described.name}" (${error instanceof Error ? error.message : String(error)})`);
  }
  return Buffer.concat(chunks, length);
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
