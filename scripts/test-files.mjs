// The compiled test files a run takes, in the order they start, and the processes they run in:
// shared by scripts/test.mjs and scripts/test-times.mjs, so that both run the same files in one
// order, in the same processes.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The files that take longest, longest first (wall time of each file in whole runs on two cores, as
 * scripts/test-times.mjs reports it; docs/performance.md, "The test suite's time").
 * They start first so that the run does not end with one of them running alone while the other
 * places have nothing left to do; the short files fill the places as they free up. A file missing
 * here, or a stale order, only costs some of that balance, never a test.
 */
export const LONGEST_FIRST = [
  'e2e/browser-sqlite',
  'e2e/browser-postgres',
  'web/account-data-exports',
  'oauth/dpop-processes',
  'docs/quickstart',
  'fuzz/web',
  'crash/crash-consistency',
  'cli/demo',
  'webhooks/processes',
  'api/heartrate',
  'web/account-data-kinds',
  'e2e/device-flow',
  'client/stride-client',
  'cli/import',
  'http/openapi',
  'http/connection-limits',
  'cli/commands',
  'bench/lib/person-upload',
  'db/postgres-faults',
  'fuzz/oauth',
  'store/sweep',
  'server.test',
  'oauth/device.test',
  'http/metrics',
  'oauth/dpop.test',
  'fuzz/http',
  'web/account-enumeration',
  'oauth/registration',
];

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}

/** Where `file` stands in LONGEST_FIRST, or after all of them. */
function rank(file) {
  const index = LONGEST_FIRST.findIndex((name) => file.includes(name));
  return index === -1 ? LONGEST_FIRST.length : index;
}

/**
 * Files that run in a process of their own even when short: they measure their own process (time,
 * memory, CPU) or change what the whole process sees (mocked timers).
 */
const ALONE = [
  'bench/lib/device-polls',
  'bench/lib/loads',
  'bench/lib/processes',
  // A fuzzer's replay command names its file from the process's own (test/fuzz/property.ts).
  'fuzz/',
  'http/metrics',
  'http/rate-limit-memory',
  'web/account-data-exports',
  'web/account-enumeration',
  'web/account-export-memory',
];

/** Hooks at a file's top level belong to its process's root test: in a shared process they would run around every file's tests. */
const TOP_LEVEL_HOOK = /^(before|after|beforeEach|afterEach)\(/m;

/**
 * The short files share processes: one per folder of dist/test, apart from those that make Argon2id
 * cheap for their process (test/support/passwords.ts), which share one of their own. Most of what
 * a short file costs alone is its process's start — Node, then the app's modules, then the first
 * app built while the code is still cold — about a second of CPU, often more than its tests take.
 * The long files (LONGEST_FIRST), those in ALONE and those with hooks at their top level each keep
 * a process of their own.
 */
function groupKey(file) {
  if (rank(file) < LONGEST_FIRST.length || ALONE.some((name) => file.includes(name))) return null;
  const text = readFileSync(file, 'utf8');
  if (TOP_LEVEL_HOOK.test(text)) return null;
  const folder = relative('dist/test', dirname(file)).split('/')[0] || 'top';
  return `${folder}${text.includes('cheapPasswordHashing()') ? '-cheap-hashing' : ''}`;
}

/**
 * What a run starts, in order: every `*.test.js` under dist/test whose path contains one of
 * `filters` (all without any), the long files first, each alone, then the shared processes (the
 * largest first), then the files that run alone. A shared process is a file written to a temporary
 * folder that imports its members one after the other; each test still reports its own file.
 */
export function testFiles(filters) {
  const files = findTests('dist/test')
    .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
    .sort()
    .sort((a, b) => rank(a) - rank(b));
  const groups = new Map();
  const alone = [];
  for (const file of files) {
    const key = groupKey(file);
    if (key === null) alone.push(file);
    else groups.set(key, [...(groups.get(key) ?? []), file]);
  }
  const shared = [...groups].sort((a, b) => b[1].length - a[1].length);
  let folder;
  const entries = shared.map(([key, members]) => {
    if (members.length === 1) return members[0];
    if (folder === undefined) {
      const made = mkdtempSync(join(tmpdir(), 'stride-tests-'));
      process.on('exit', () => rmSync(made, { recursive: true, force: true }));
      folder = made;
    }
    const entry = join(folder, `${key}.test.js`);
    const imports = members.map((member) => `await import(${JSON.stringify(pathToFileURL(resolve(member)).href)});`);
    writeFileSync(entry, `// ${members.length} files of dist/test in one process (scripts/test-files.mjs)\n${imports.join('\n')}\n`);
    return entry;
  });
  const long = alone.filter((file) => rank(file) < LONGEST_FIRST.length);
  const short = alone.filter((file) => rank(file) === LONGEST_FIRST.length);
  return [...long, ...entries, ...short];
}

