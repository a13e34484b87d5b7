// The compiled test files a run takes, the processes they run in and the order those start: shared
// by scripts/test.mjs and scripts/test-times.mjs, so that both run the same files the same way.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * What takes longest, longest first (wall time in whole runs on two cores, as
 * scripts/test-times.mjs reports it; docs/lab-notes/2026-11-26-test-suite-time.md and
 * docs/lab-notes/2026-11-29-suite-time.md and docs/lab-notes/2026-11-29-suite-time-2.md): a name with a
 * slash is a file, which runs in a process of its own (its process's start is a small part of its
 * time); a name without one is a shared process (groupKey below). They start first so that the
 * run does not end with one of them running alone while the other place has nothing left to do;
 * the short ones fill the places as they free up. A name missing here, or a stale order, only
 * costs some of that balance, never a test.
 */
export const LONGEST_FIRST = [
  'e2e/browser-sqlite',
  'e2e/browser-postgres',
  'db',
  'store',
  'web-cheap-hashing',
  'api',
  'bench',
  'cli/takeout',
  'docs/quickstart',
  'oauth-cheap-hashing',
  'cli/demo',
  'web/account-data-exports',
  'webhooks/processes',
  'crash/crash-consistency',
  'http-cheap-hashing',
  'web/page-layout',
  'e2e/device-flow',
  'client/stride-client',
  'domain/takeout/imports',
  'db/postgres-faults',
  'http/connection-limits',
  'fuzz/oauth',
  'top',
  'fuzz/api',
  'oauth/dpop.test',
  'store/sweep',
  'web/account-imports',
  'docs-cheap-hashing',
  'fuzz/web',
  'http/openapi',
  'test/processes.test',
  'cli/commands',
  'test/server.test',
  'http',
  'web',
  'fuzz/http',
  'web/account-data-kinds',
  'http/metrics',
  'web/account-enumeration',
  'cli/import',
  'webhooks-cheap-hashing',
  'web/account-export-memory',
];

/**
 * Files that run in a process of their own even when short: they measure their own process (time,
 * memory, CPU) or change what the whole process sees (mocked timers).
 */
const ALONE = [
  'bench/lib/device-polls',
  'bench/lib/loads',
  'bench/lib/processes',
  'http/metrics',
  'http/rate-limit-memory',
  'web/account-data-exports',
  'web/account-enumeration',
  'web/account-export-memory',
  // A fuzzer's replay command names its file from the process's own (test/fuzz/property.ts).
  'fuzz/',
];

/** Hooks at a file's top level belong to its process's root test: in a shared process they would run around every file's tests. */
const TOP_LEVEL_HOOK = /^(before|after|beforeEach|afterEach)\(/m;

const LONG_FILES = LONGEST_FIRST.filter((name) => name.includes('/'));

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}

/**
 * The shared process a file runs in, or null for one of its own. Most of what a short file costs
 * alone is its process's start — Node, then the app's modules, then the first app built while the
 * code is still cold — about a second of CPU, often more than its tests take. So the short files
 * of a folder of dist/test share a process, apart from those that make Argon2id cheap for their
 * process (test/support/passwords.ts), which share one of their own.
 */
function groupKey(file) {
  if (LONG_FILES.some((name) => file.includes(name)) || ALONE.some((name) => file.includes(name))) return null;
  const text = readFileSync(file, 'utf8');
  if (TOP_LEVEL_HOOK.test(text)) return null;
  const folder = relative('dist/test', dirname(file)).split('/')[0] || 'top';
  return `${folder}${text.includes('cheapPasswordHashing()') ? '-cheap-hashing' : ''}`;
}

/** Where a process stands in LONGEST_FIRST (a file by a part of its path, a shared one by its name), or after all of them. */
function rank(unit) {
  const index = LONGEST_FIRST.findIndex((name) => (unit.group === undefined ? name.includes('/') && unit.path.includes(name) : name === unit.group));
  return index === -1 ? LONGEST_FIRST.length : index;
}

/**
 * Writes the file a shared process runs: it imports its members one after the other. A member that
 * fails to load (an error at its top level) is a failing test of its own name, and the others
 * still run.
 */
function sharedEntry(folder, key, members) {
  const entry = join(folder, `${key}.test.js`);
  const urls = members.map((member) => pathToFileURL(resolve(member)).href);
  writeFileSync(
    entry,
    `// ${members.length} files of dist/test in one process (scripts/test-files.mjs)
import { test } from 'node:test';
for (const url of ${JSON.stringify(urls, null, 2)}) {
  try {
    await import(url);
  } catch (error) {
    test(\`\${url} loads\`, () => {
      throw error;
    });
  }
}
`,
  );
  return entry;
}

/** Each shared process's file (as testFiles returns it) → the files it runs, filled by testFiles. */
export const sharedMembers = new Map();

/**
 * What a run starts, in order: the processes for every `*.test.js` under dist/test whose path
 * contains one of `filters` (all without any). A shared process is a file in a temporary folder
 * (removed when this process exits) that imports its members; each test still reports its own
 * file.
 */
export function testFiles(filters) {
  const files = findTests('dist/test')
    .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
    .sort();
  const groups = new Map();
  const units = [];
  for (const file of files) {
    const key = groupKey(file);
    if (key === null) units.push({ path: file });
    else groups.set(key, [...(groups.get(key) ?? []), file]);
  }
  // A file alone in its folder's group joins the others of its kind.
  for (const [key, members] of [...groups]) {
    if (members.length > 1) continue;
    groups.delete(key);
    const others = key.endsWith('-cheap-hashing') ? 'others-cheap-hashing' : 'others';
    groups.set(others, [...(groups.get(others) ?? []), ...members]);
  }
  let folder;
  for (const [key, members] of groups) {
    if (members.length === 1) {
      units.push({ path: members[0] });
      continue;
    }
    if (folder === undefined) {
      const made = mkdtempSync(join(tmpdir(), 'stride-tests-'));
      process.on('exit', () => rmSync(made, { recursive: true, force: true }));
      folder = made;
    }
    const entry = sharedEntry(folder, key, members);
    units.push({ path: entry, group: key, size: members.length });
    sharedMembers.set(entry, members.map((member) => resolve(member)));
  }
  // Longest first; then the shared processes not named there, the largest first; then the files.
  return units
    .sort((a, b) => rank(a) - rank(b) || (b.size ?? 0) - (a.size ?? 0))
    .map((unit) => unit.path);
}
