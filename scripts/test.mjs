#!/usr/bin/env node
// Runs every compiled `*.test.js` under dist/test with Node's test runner, two processes at a
// time, the longest files first: each long file in a process of its own, the short ones of a
// folder together (scripts/test-files.mjs). Arguments narrow the run to files whose path contains
// one of them:
//   npm test -- oauth/token
// TEST_CONCURRENCY overrides how many processes run at once.
//
// With --typecheck (as `npm test` runs it, after scripts/emit.mjs compiled without checking), tsc
// checks the types alongside the tests, and a type error fails the run: the check is half a
// minute of one core that the tests' waits on their child processes leave free.
//
// Each process has TEST_FILE_TIMEOUT seconds (300 by default): past that it is stopped and the run
// fails, naming the file (for a shared process, the files it runs). In CI (CI=true)
// a skipped test fails the run too, so that CI never reports as run what it did not run; a test
// that exists for one database is registered only there, and a missing dependency is a failure
// (test/support/dependencies.ts).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { sharedMembers, testFiles } from './test-files.mjs';

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

const FILE_TIMEOUT_SECONDS = Number(process.env.TEST_FILE_TIMEOUT ?? 300);
if (!(FILE_TIMEOUT_SECONDS > 0)) {
  console.error(`TEST_FILE_TIMEOUT must be a positive number of seconds, not ${process.env.TEST_FILE_TIMEOUT}`);
  process.exit(1);
}
const ON_CI = !['', 'false', '0'].includes((process.env.CI ?? '').trim().toLowerCase());

const typecheck = process.argv.includes('--typecheck');
const filters = process.argv.slice(2).filter((arg) => arg !== '--typecheck');
const files = testFiles(filters);
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

/** tsc over the whole project, no output written; resolves to what it printed when it fails, null when the types hold. */
function checkTypes() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit', '--incremental', 'false'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve(`tsc did not start: ${error.message}`));
    child.on('close', (code) => resolve(code === 0 ? null : output || `tsc exited with ${code}`));
  });
}
const typeErrors = typecheck ? checkTypes() : Promise.resolve(null);

// The report comes in the order the files were started (each file's tests together); the counts
// at the end are for the whole run.
const stream = run({ files, concurrency: CONCURRENCY, timeout: FILE_TIMEOUT_SECONDS * 1000 });

const timedOut = [];
const skipped = [];
stream.on('test:pass', (data) => {
  if (data.skip !== undefined) skipped.push(`${data.file}: ${data.name} (${data.skip === true ? 'skipped' : data.skip})`);
});
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
  // A process stopped by the timeout reports none of its tests, so a shared one is named by all its files.
  if (data.details?.error?.failureType === 'testTimeoutFailure' && data.nesting === 0 && files.includes(data.name)) {
    const inside = sharedMembers.get(data.name);
    timedOut.push(inside ? `${data.name}, which runs:\n${inside.map((member) => `    ${member}`).join('\n')}` : data.name);
  }
});
stream.on('end', async () => {
  const errors = await typeErrors;
  if (errors !== null) {
    process.exitCode = 1;
    console.error(`\nthe type check (tsc --noEmit) failed:\n${errors}`);
  }
  if (timedOut.length > 0) {
    process.exitCode = 1;
    console.error(`\nstopped after ${FILE_TIMEOUT_SECONDS} s (TEST_FILE_TIMEOUT):\n${timedOut.map((file) => `  ${file}`).join('\n')}`);
  }
  if (skipped.length > 0) {
    console.error(`\n${skipped.length} test(s) skipped${ON_CI ? ' — a failure in CI (CI=true)' : ''}:\n${skipped.map((line) => `  ${line}`).join('\n')}`);
    if (ON_CI) process.exitCode = 1;
  }
});
stream.compose(new spec()).pipe(process.stdout);
