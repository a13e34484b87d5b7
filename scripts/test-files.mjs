// The compiled test files a run takes, in the order they start: shared by scripts/test.mjs and
// scripts/test-times.mjs, so that both run the same files in one order.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

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

/** Every `*.test.js` under dist/test whose path contains one of `filters` (all without any), longest first. */
export function testFiles(filters) {
  return findTests('dist/test')
    .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
    .sort()
    .sort((a, b) => rank(a) - rank(b));
}
