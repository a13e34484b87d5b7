#!/usr/bin/env node
// Runs every compiled `*.test.js` under dist/test with Node's test runner, two processes at a
// time, the longest files first: each long file in a process of its own, the short ones of a
// folder together (scripts/test-files.mjs). Arguments narrow the run to files whose path contains
// one of them:
//   npm test -- oauth/token
// TEST_CONCURRENCY overrides how many processes run at once.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { testFiles } from './test-files.mjs';

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

const filters = process.argv.slice(2);
const files = testFiles(filters);
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
