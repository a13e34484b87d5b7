#!/usr/bin/env node
// Says, before `npm start` and `npm run stride` build, that a build is coming and how long the
// first one takes, instead of twenty silent seconds. Says nothing when the build is up to date:
// nothing under the sources is newer than the build's record (dist/tsconfig.tsbuildinfo).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['src', 'bench', 'test', 'packages/client/src', 'tsconfig.json', 'package.json'];

function builtAt() {
  try {
    return statSync(join(root, 'dist', 'tsconfig.tsbuildinfo')).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Whether a file under `path` was changed after `since`. */
function changedSince(path, since) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return false;
  }
  if (!stat.isDirectory()) return stat.mtimeMs > since;
  return readdirSync(path).some((name) => changedSince(join(path, name), since));
}

const since = builtAt();
if (since === undefined) console.error('Building Stride (the first run takes about 20 s)…');
else if (SOURCES.some((path) => changedSince(join(root, path), since))) console.error('Building Stride (the sources changed since the last build)…');
