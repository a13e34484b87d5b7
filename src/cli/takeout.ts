/**
 * `stride import --takeout FILE --user EMAIL` (docs/takeout.md): the same import the account page
 * starts, run in this process — previewed, queued and run to its end, with a progress line on
 * standard error and the report on standard output. Run again after it was interrupted (the
 * process killed), it carries on the person's unfinished import of the same file once the
 * interrupted run's lease has run out, rather than starting another.
 */
import { resolve, basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.js';
import { archiveLimits, ArchiveRefused, importOf, previewImport, startImport, type ImportView } from '../domain/takeout/imports.js';
import { claimAndRun, leaseOwnerName } from '../domain/takeout/runner.js';
import type { Stores } from '../store/stores.js';
import type { User } from '../store/users.js';

/** A one-line failure of the command. */
export class TakeoutCommandError extends Error {}

const KIND_NAMES: Record<string, string> = {
  steps: 'steps',
  distance: 'distance',
  calories: 'calories',
  heartrate: 'heart rate',
  sleep: 'sleep',
  weight: 'weight',
  resting_heart_rate: 'resting heart rate',
};

/** The person's unfinished import of the file at `path`, if any: it is carried on rather than started again. */
async function unfinishedImportOf(stores: Stores, userId: string, path: string) {
  const imports = await stores.takeoutImports.list(userId, 50);
  return imports.find((found) => (found.state === 'queued' || found.state === 'running') && found.archivePath === path) ?? null;
}

/** Imports the archive at `file` for `user`; resolves to the import as it ended. */
export async function importTakeout(stores: Stores, config: Config, user: User, file: string, clock: () => number, progress: (line: string) => void): Promise<ImportView> {
  const path = resolve(file);
  const limits = archiveLimits(config.takeout.maxArchiveBytes);
  let id: string;
  const unfinished = await unfinishedImportOf(stores, user.id, path);
  if (unfinished) {
    id = unfinished.id;
    progress(`carrying on the unfinished import ${id} of ${path} (${unfinished.nextFile} of ${unfinished.filesTotal} files done)`);
  } else {
    let previewed;
    try {
      previewed = await previewImport(stores, user, { path, name: basename(path), ownedByServer: false }, limits, clock());
    } catch (error) {
      if (error instanceof ArchiveRefused) throw new TakeoutCommandError(`${file} ${error.message}; nothing was imported`);
      throw error;
    }
    const started = await startImport(stores, user.id, previewed.id, clock());
    if ('refused' in started) throw new TakeoutCommandError(`${file}: ${started.refused}; nothing was imported`);
    id = previewed.id;
  }
  const owner = leaseOwnerName();
  const settings = {
    leaseSeconds: config.takeout.leaseSeconds,
    coalesceSeconds: config.webhooks.coalesceSeconds,
    limits,
    clock,
    onProgress: (at: { kind: string; filesDone: number; filesTotal: number }) =>
      progress(`importing ${KIND_NAMES[at.kind] ?? at.kind}: ${at.filesDone} of ${at.filesTotal} files (${Math.floor((100 * at.filesDone) / at.filesTotal)} %)`),
  };
  let told = false;
  for (;;) {
    const end = await claimAndRun(stores, owner, settings, id);
    if (end === 'finished') break;
    const now = await stores.takeoutImports.get(user.id, id);
    if (!now) throw new TakeoutCommandError(`the import ${id} is gone`);
    if (now.state !== 'queued' && now.state !== 'running') break;
    // Another process holds it (a run interrupted a moment ago, or a server's runner): wait for it.
    if (!told) progress(`the import ${id} is being run by another process; waiting for it (up to ${config.takeout.leaseSeconds} s after it last moved)`);
    told = true;
    await sleep(1000);
  }
  return (await importOf(stores, user.id, id))!;
}

/** The report as the command prints it. */
export function reportText(view: ImportView): string {
  const lines = [`import ${view.id} of ${view.archive.name}: ${view.state}${view.error ? ` (${view.error})` : ''}`];
  const preview = view.preview;
  if (preview) lines.push(`local times read in ${preview.timezone.name} (${preview.timezone.from === 'archive' ? 'the archive\'s profile' : 'the person\'s profile'}); weights in ${preview.weight_unit.unit}`);
  for (const kind of view.report.kinds) {
    const span = kind.first_date ? `, ${kind.first_date} to ${kind.last_date}` : '';
    const detail = kind.note ?? `${kind.days_imported} day(s) imported${span}; ${kind.written} written, ${kind.kept} already held (kept), ${kind.skipped} skipped`;
    lines.push(`  ${(KIND_NAMES[kind.kind] ?? kind.kind).padEnd(19)} ${kind.files} file(s), ${kind.entries} entries: ${detail}`);
  }
  const notRead = Object.entries(view.report.not_read);
  if (notRead.length > 0) lines.push(`  not read (Stride does not hold these): ${notRead.map(([what, count]) => `${what} (${count})`).join(', ')}`);
  const { skipped } = view.report;
  if (skipped.total > 0) {
    lines.push(`  skipped entries: ${skipped.total} (${Object.entries(skipped.by_code).map(([code, count]) => `${code} ${count}`).join(', ')})`);
    for (const entry of skipped.entries.slice(0, 20)) lines.push(`    ${entry.file}${entry.entry === null ? '' : ` entry ${entry.entry}`}: ${entry.reason}`);
    if (skipped.total > 20) lines.push(`    … ${skipped.total - 20} more (--json lists the first ${skipped.entries.length})`);
  }
  return lines.join('\n');
}
