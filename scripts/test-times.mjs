#!/usr/bin/env node
// Runs the compiled test files as scripts/test.mjs does (the same processes, in the same order, two
// at a time) and reports each process's wall time and CPU time: user+sys of its whole process tree,
// including the servers it starts that leave it (PostgreSQL clusters started by pg_ctl). A shared
// process is named by its file in a temporary folder (scripts/test-files.mjs). Arguments narrow the
// run as for scripts/test.mjs; TEST_TIMES_JSON=<path> also writes the figures as JSON.
//   node scripts/test-times.mjs
// Linux only (/proc and /usr/bin/time). The CPU time of the process tree is what wait4 reports for
// the file's process (it and every descendant it waited for) plus, for each descendant that outlived
// its parent (a daemon), its own CPU time at the last look (every 200 ms). A process that leaves its
// parent and ends between two looks is missed (Chromium's renderers, often): for the browser files,
// the machine's busy time over a run of the file alone (/proc/stat) is the better figure.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testFiles } from './test-files.mjs';

const MARK = 'STRIDE_TEST_TIMES_FILE';
const TICKS_PER_SECOND = 100;
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 2);

const filters = process.argv.slice(2);
const files = testFiles(filters);

/** pid → { file, ppid, own, children } (CPU in ticks) of every process carrying the mark. */
const seen = new Map();

function readMark(pid) {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    const entry = environ.split('\0').find((e) => e.startsWith(`${MARK}=`));
    return entry?.slice(MARK.length + 1);
  } catch {
    return undefined;
  }
}

function look() {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue;
    }
    // Fields after the command (which may hold spaces): state ppid … utime(14) stime cutime cstime … starttime(22).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const key = `${pid}:${fields[19]}`;
    let entry = seen.get(key);
    if (!entry) {
      const file = readMark(pid);
      if (file === undefined) continue;
      entry = { pid, file, command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) };
      seen.set(key, entry);
    }
    entry.state = fields[0];
    entry.ppid = Number(fields[1]);
    entry.own = Number(fields[11]) + Number(fields[12]);
    entry.children = Number(fields[13]) + Number(fields[14]);
  }
}

const results = new Map();
const scratch = mkdtempSync(join(tmpdir(), 'test-times-'));

function runFile(file, index) {
  return new Promise((resolve) => {
    const timing = join(scratch, `${index}.time`);
    const started = process.hrtime.bigint();
    let output = '';
    const child = spawn('/usr/bin/time', ['-f', '%e %U %S', '-o', timing, process.execPath, '--test', '--test-reporter=tap', file], {
      env: { ...process.env, [MARK]: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      const [, user, sys] = readFileSync(timing, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
      const count = (label) => Number(output.match(new RegExp(`^# ${label} (\\d+)`, 'm'))?.[1] ?? NaN);
      results.set(file, { file, wall, waited: user + sys, root: child.pid, code, tests: count('tests'), pass: count('pass'), fail: count('fail'), skipped: count('skip') });
      writeFileSync(join(scratch, `${index}.tap`), `# file ${file}\n${output}`);
      resolve();
    });
  });
}

const poller = setInterval(look, 200);
const started = Date.now();
let next = 0;
async function worker() {
  while (next < files.length) {
    const index = next++;
    await runFile(files[index], index);
    process.stderr.write(`${results.size}/${files.length} ${files[index]}\n`);
  }
}
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
look();
clearInterval(poller);
const wall = (Date.now() - started) / 1000;

// A marked process whose parent is not a marked one (other than the file's root) outlived its
// parent: wait4 did not count it, so its own figures are added.
const marked = new Set([...seen.values()].map((entry) => entry.pid));
const leftover = [];
for (const entry of seen.values()) {
  const result = results.get(entry.file);
  if (!result || entry.pid === result.root || marked.has(entry.ppid)) continue;
  result.daemons = (result.daemons ?? 0) + (entry.own + entry.children) / TICKS_PER_SECOND;
  if (entry.state !== 'Z' && existsSync(`/proc/${entry.pid}`)) leftover.push(`${entry.pid} (${entry.file})`);
}

// Where each file's CPU went, by command (own CPU of the processes seen; short-lived ones are missed).
for (const entry of seen.values()) {
  const result = results.get(entry.file);
  if (!result) continue;
  result.commands ??= {};
  result.commands[entry.command] = (result.commands[entry.command] ?? 0) + entry.own / TICKS_PER_SECOND;
}

const rows = [...results.values()].map((r) => ({ ...r, cpu: r.waited + (r.daemons ?? 0) })).sort((a, b) => b.wall - a.wall);
const totals = rows.reduce((sum, r) => ({ tests: sum.tests + r.tests, fail: sum.fail + r.fail, cpu: sum.cpu + r.cpu }), { tests: 0, fail: 0, cpu: 0 });
console.log('wall s   cpu s daemons  tests  file');
for (const r of rows) {
  console.log(`${r.wall.toFixed(1).padStart(6)} ${r.cpu.toFixed(1).padStart(7)} ${(r.daemons ?? 0).toFixed(1).padStart(7)} ${String(r.tests).padStart(6)}  ${r.file}${r.code === 0 ? '' : `  (exit ${r.code}, ${r.fail} failed)`}`);
}
console.log(`whole run: ${wall.toFixed(1)} s wall, ${totals.cpu.toFixed(1)} s CPU, ${files.length} files, ${totals.tests} tests, ${totals.fail} failed`);
if (leftover.length > 0) console.log(`still running after their file ended: ${leftover.join(', ')}`);
console.log(`each file's TAP output: ${scratch}`);
if (process.env.TEST_TIMES_JSON) writeFileSync(process.env.TEST_TIMES_JSON, JSON.stringify({ wall, rows }, null, 2));
