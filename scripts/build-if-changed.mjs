#!/usr/bin/env node
// Runs `npm run build` unless nothing it reads changed since the last build that finished: the
// command line (`npm run stride`, `npm start`) then starts in well under a second instead of paying
// for the client's type generation and two `tsc -b` up-to-date checks (about 4 s of CPU) each time.
// The stamp lives in dist/, so `rm -rf dist` (as `npm test` does) means a full build; a source
// changed while a build runs is newer than the stamp, which carries the build's start time.
// It says so before it builds, so the first `npm start` is not twenty silent seconds.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync, utimesSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const STAMP = 'dist/.build-inputs-stamp';
/** Everything `npm run build` reads: the sources of both projects, their configs and the installed packages. */
const INPUT_TREES = ['src', 'test', 'bench', 'packages/client/src', 'packages/client/scripts'];
const INPUT_FILES = ['tsconfig.json', 'packages/client/tsconfig.json', 'package.json', 'packages/client/package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'scripts/build-if-changed.mjs'];
/** Written by the build itself: never a reason to build again. */
const OUTPUTS = new Set(['packages/client/src/generated']);

function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a file removed changes its folder
  for (const name of readdirSync(path)) {
    const child = join(path, name);
    if (!OUTPUTS.has(child)) latest = Math.max(latest, newest(child));
  }
  return latest;
}

function stampTime() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return -1;
  }
}

const inputs = Math.max(...INPUT_TREES.map(newest), ...INPUT_FILES.map(newest));
const stamped = stampTime();
if (inputs >= stamped) {
  console.error(stamped < 0 ? 'Building Stride (the first run takes about 20 s)…' : 'Building Stride (the sources changed since the last build)…');
  const started = new Date();
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  mkdirSync('dist', { recursive: true });
  writeFileSync(STAMP, '');
  utimesSync(STAMP, started, started);
}
