import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { processCpu } from '../../../bench/lib/processes.js';

/** Keeps a thread busy until the process has used `ms` more milliseconds of CPU. */
const spin = (ms: number) =>
  `const start = process.cpuUsage(); for (let u = process.cpuUsage(start); u.user + u.system < ${ms * 1000}; u = process.cpuUsage(start));`;

/**
 * Uses 400 ms of CPU on its event loop, then 150 ms on a worker thread (counted in CPU time, so a
 * busy machine does not shorten them), says "done" and waits to be killed.
 */
const BUSY_CHILD = `
const { Worker } = require('node:worker_threads');
${spin(400)}
const worker = new Worker(${JSON.stringify(spin(150))}, { eval: true });
worker.on('exit', () => { process.stdout.write('done\\n'); setInterval(() => {}, 1000); });
`;

describe('process CPU time', () => {
  it('tells the event loop from the other threads, ended ones included', async () => {
    const child = spawn(process.execPath, ['-e', BUSY_CHILD], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await once(child.stdout!, 'data');
      const cpu = processCpu(child.pid!);
      assert.ok(cpu);
      assert.ok(cpu.mainMs >= 380, `event loop ${cpu.mainMs} ms`);
      // The worker's 150 ms, and what V8's helper threads did meanwhile.
      assert.ok(cpu.otherMs >= 130 && cpu.otherMs < 380, `other threads ${cpu.otherMs} ms (the worker has ended)`);
    } finally {
      child.kill();
    }
  });

  it('is null for a process that is gone', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    assert.equal(processCpu(child.pid!), null);
  });
});
