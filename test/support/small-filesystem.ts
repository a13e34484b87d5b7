/**
 * Filesystems of the test's own, for storage faults that must not touch the machine's disks: a
 * small tmpfs to fill up, an ext4 image on a loop device whose files can be made immutable (ext4
 * then refuses every write to them, through descriptors already open too; tmpfs does not). Both
 * need root (mount); `smallFilesystemUnavailable` says why not when they cannot be had (in CI, where
 * they must be had, it throws).
 */
import { execFile, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { missing } from './dependencies.js';

const run = promisify(execFile);

export interface SmallFilesystem {
  dir: string;
  unmount(): Promise<void>;
}

let probed: string | null | undefined;

/** Why this machine cannot mount a tmpfs (not root, no permission in this sandbox), or null; in CI, thrown. */
export function smallFilesystemUnavailable(): string | null {
  if (probed === undefined) {
    if (userInfo().uid !== 0) {
      probed = 'mounting a filesystem of the test’s own needs root';
    } else {
      const dir = mkdtempSync('/tmp/stride-mount-probe-');
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
      if (mounted.status === 0) spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
      probed = mounted.status === 0 ? null : `cannot mount a tmpfs here: ${mounted.stderr.trim()}`;
    }
  }
  return missing(probed);
}

/** Why no ext4 image can be loop-mounted here, or null; in CI, thrown. */
export function ext4ImageUnavailable(): string | null {
  const base = smallFilesystemUnavailable();
  if (base) return base;
  for (const tool of ['mkfs.ext4', 'chattr', 'losetup']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return missing(`${tool} is not installed (apt-get install e2fsprogs mount)`);
  }
  return null;
}

export async function mountTmpfs(sizeBytes: number): Promise<SmallFilesystem> {
  const dir = mkdtempSync('/tmp/stride-tmpfs-');
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir]);
  return { dir, unmount: () => unmountAndRemove(dir) };
}

export async function mountExt4Image(sizeBytes: number): Promise<SmallFilesystem> {
  const dir = mkdtempSync('/tmp/stride-ext4-');
  const image = `${dir}.img`;
  await run('truncate', ['-s', String(sizeBytes), image]);
  await run('mkfs.ext4', ['-q', '-F', image]);
  await run('mount', ['-o', 'loop', image, dir]);
  return {
    dir,
    async unmount() {
      await unmountAndRemove(dir);
      rmSync(image, { force: true });
    },
  };
}

async function unmountAndRemove(dir: string): Promise<void> {
  // Lazily: a process the test killed may still be closing its files.
  await run('umount', ['-l', dir]).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

/** Fills `dir`'s filesystem to the last byte with one file; `free()` deletes it. */
export function fillDisk(dir: string): { free(): void } {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 512, 1]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return { free: () => unlinkSync(path) };
}

/** chattr ±i: an immutable file refuses every write, through open descriptors too (on ext4). */
export async function setImmutable(paths: string[], immutable: boolean): Promise<void> {
  await run('chattr', [immutable ? '+i' : '-i', ...paths]);
}
