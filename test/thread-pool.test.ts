/**
 * `stride` runs with one libuv pool thread per core (src/thread-pool.cts): counted from the
 * process's own threads at exit (Linux's /proc), after loading the command line has started the
 * pool — on Node 20 the ES module loader reads its files on the pool.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { CLI_PATH } from './support/cli.js';

/** Prints the pool size asked for and the process's thread count when it exits. */
const PROBE = join(tmpdir(), `stride-thread-probe-${process.pid}.cjs`);
writeFileSync(
  PROBE,
  `process.on('exit', () => process.stderr.write('pool=' + process.env.UV_THREADPOOL_SIZE + ' threads=' + require('node:fs').readdirSync('/proc/self/task').length + '\\n'));\n`,
);

const ESM_ENTRY = fileURLToPath(new URL('../src/cli.js', import.meta.url));

/** `node --require PROBE entry --help` with UV_THREADPOOL_SIZE set to `pool` (or unset). */
function atExit(entry: string, pool?: string): Promise<{ pool: string; threads: number }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.UV_THREADPOOL_SIZE;
  if (pool !== undefined) env.UV_THREADPOOL_SIZE = pool;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--require', PROBE, entry, '--help'], { env }, (error, _stdout, stderr) => {
      const match = /pool=(\S+) threads=(\d+)/.exec(stderr);
      if (error || !match) reject(error ?? new Error(`no thread count in: ${stderr}`));
      else resolve({ pool: match[1]!, threads: Number(match[2]) });
    });
  });
}

describe('the stride command', { skip: process.platform !== 'linux' && 'counts threads in /proc (Linux)' }, () => {
  after(() => rmSync(PROBE, { force: true }));

  it('sizes the thread pool to the cores, keeps an operator’s size, and sets it before loading', async () => {
    // The same program with a pool of one thread: every other thread it has.
    const others = (await atExit(CLI_PATH, '1')).threads - 1;
    assert.deepEqual(await atExit(CLI_PATH), { pool: String(availableParallelism()), threads: others + availableParallelism() });
    assert.deepEqual(await atExit(CLI_PATH, '3'), { pool: '3', threads: others + 3 }, 'UV_THREADPOOL_SIZE given by the operator');
    // Started as an ES module, the loader starts the pool (libuv's default: 4) before any code runs:
    // the launcher is what sizes it.
    assert.equal((await atExit(ESM_ENTRY)).threads, others + 4);
  });
});
