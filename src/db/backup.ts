/**
 * `stride backup FILE` and `stride restore FILE` for the embedded SQLite database
 * (docs/operations.md, "Backups"), with SQLite's online backup API: a backup is a consistent copy
 * while the server runs and writes; a restore writes the copy into the database in one go. For
 * PostgreSQL, pg_dump and pg_restore do this job.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import type { Db } from './database.js';
import { MIGRATIONS } from './migrate.js';

export class BackupError extends Error {}

const POSTGRES = 'backup and restore copy the embedded SQLite database; for PostgreSQL use pg_dump and pg_restore (docs/deployment.md)';

export async function backupDatabase(db: Db, file: string): Promise<{ file: string; bytes: number }> {
  if (db.dialect !== 'sqlite') throw new BackupError(POSTGRES);
  if (existsSync(file)) throw new BackupError(`${file} exists; name a new file`);
  // Written under another name and renamed when complete: a backup cut short leaves no file that looks whole.
  const partial = `${file}.partial`;
  try {
    // Made here, readable by the operator alone (it holds the server's keys, webhook secrets and
    // password hashes): never a file someone else made in advance, nor one a link points to.
    closeSync(openSync(partial, 'wx', 0o600));
  } catch (error) {
    throw new BackupError(`could not create ${partial}: ${(error as Error).message}${(error as NodeJS.ErrnoException).code === 'EEXIST' ? ' (left by a backup cut short? remove it)' : ''}`);
  }
  try {
    await db.sqlite.backup(partial);
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new BackupError(`could not write ${file}: ${(error as Error).message}`);
  }
  return { file, bytes: statSync(file).size };
}

/**
 * Replaces the database at `databaseUrl` with the backup `file`, after checking it is a whole
 * Stride database of a version this one knows. The server should be stopped (docs/operations.md).
 */
export async function restoreDatabase(databaseUrl: string, file: string): Promise<{ file: string; migrations: string[] }> {
  if (!databaseUrl.startsWith('sqlite:')) throw new BackupError(POSTGRES);
  const target = databaseUrl.slice('sqlite:'.length);
  if (target === ':memory:') throw new BackupError('DATABASE_URL is an in-memory database: there is nothing to restore into');
  let source: SQLite.Database;
  try {
    source = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupError(`cannot open ${file}: ${(error as Error).message}`);
  }
  try {
    const migrations = checkedBackup(source, file);
    await source.backup(target);
    return { file, migrations };
  } finally {
    source.close();
  }
}

function checkedBackup(source: SQLite.Database, file: string): string[] {
  let names: string[];
  try {
    const integrity = source.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupError(`${file} is damaged (integrity check: ${String(integrity).slice(0, 100)}); nothing was restored`);
    names = source.prepare('select name from stride_migrations order by name').pluck().all() as string[];
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} is not a Stride database backup (${(error as Error).message}); nothing was restored`);
  }
  const unknown = names.find((name) => !(name in MIGRATIONS));
  if (unknown) throw new BackupError(`${file} was made by a newer Stride (migration ${unknown}); upgrade Stride first; nothing was restored`);
  return names;
}
