/**
 * `stride` runs with one libuv pool thread per core (src/thread-pool.cts): counted from the
 * process's own threads at exit, after loading the command line has started the pool.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { CLI_PATH } from './support/cli.js';

/** Prints the process's thread count when it exits (Linux: one entry per thread in /proc). */
const PROBE = join(tmpdir(), `stride-thread-probe-${process.pid}.cjs`);
writeFileSync(PROBE, `process.on('exit', () => process.stderr.write('threads=' + require('node:fs').readdirSync('/proc/self/task').length + '\\n'));\n`);

const ESM_ENTRY = fileURLToPath(new URL('../src/cli.js', import.meta.url));

/** Threads of `node --require PROBE entry --help` at exit; `pool` sets UV_THREADPOOL_SIZE. */
function threadsAtExit(entry: string, pool?: string): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.UV_THREADPOOL_SIZE;
  if (pool !== undefined) env.UV_THREADPOOL_SIZE = pool;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--require', PROBE, entry, '--help'], { env }, (error, _stdout, stderr) => {
      const match = /threads=(\d+)/.exec(stderr);
      if (error || !match) reject(error ?? new Error(`no thread count in: ${stderr}`));
      else resolve(Number(match[1]));
    });
  });
}

describe('the stride command', () => {
  it('sizes the thread pool to the cores, keeps an operator’s size, and must set it before loading', async () => {
    // The same program with a pool of one thread: every other thread it has.
    const others = (await threadsAtExit(CLI_PATH, '1')) - 1;
    assert.equal(await threadsAtExit(CLI_PATH), others + availableParallelism(), 'one pool thread per core');
    assert.equal(await threadsAtExit(CLI_PATH, '3'), others + 3, 'UV_THREADPOOL_SIZE given by the operator');
    // Started as an ES module, the loader has started the pool (libuv's default: 4) before any code runs.
    assert.equal(await threadsAtExit(ESM_ENTRY), others + 4);
  });
});
