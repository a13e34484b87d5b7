#!/usr/bin/env node
// Runs every compiled `*.test.js` under dist/test with Node's test runner, one process per file,
// two files at a time, the longest first. Arguments narrow the run to files whose path contains
// one of them:
//   npm test -- oauth/token
// TEST_CONCURRENCY overrides how many files run at once.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

/**
 * The files that take longest, longest first (wall time of each file in whole runs on two cores, as
 * scripts/test-times.mjs reports it; docs/performance.md, "The test suite's time").
 * They start first so that the run does not end with one of them running alone while the other
 * places have nothing left to do; the short files fill the places as they free up. A file missing
 * here, or a stale order, only costs some of that balance, never a test.
 */
const LONGEST_FIRST = [
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

/**
 * Two files at a time, one per core of the machines the suite runs on. A third one at a time was
 * tried: the waits of some files (on child processes, on the timeouts they test) are filled by the
 * others' work already, and the whole run took no less time.
 */
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  console.error(`TEST_CONCURRENCY must be a positive integer, not ${process.env.TEST_CONCURRENCY}`);
  process.exit(1);
}

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

const filters = process.argv.slice(2);
const files = findTests('dist/test')
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort()
  .sort((a, b) => rank(a) - rank(b));
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

// The report comes in the order the files were started (each file's tests together); the counts
// at the end are for the whole run.
const stream = run({ files, concurrency: CONCURRENCY });
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
stream.compose(new spec()).pipe(process.stdout);
