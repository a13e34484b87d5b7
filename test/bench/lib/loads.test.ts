import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fixedRequestWorkload, interleave, type Workload } from '../../../bench/lib/loads.js';

/** Keeps this thread busy until it has used `ms` milliseconds of CPU (not of wall clock). */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (let used = process.cpuUsage(start); used.user + used.system < ms * 1000; used = process.cpuUsage(start)) {
    // busy
  }
}

/**
 * A workload that records when it ran and "measures" one success per millisecond asked for; with
 * `busyMs`, each slice also keeps this process busy that long, and this process is its "server".
 */
function recording(name: string, order: string[], busyMs = 0): Workload & { slices: number[]; closed: boolean } {
  let ok = 0;
  let seconds = 0;
  const workload = {
    pid: busyMs > 0 ? process.pid : null,
    slices: [] as number[],
    closed: false,
    async warmUp(duration: number) {
      order.push(`${name} warm-up ${duration}`);
    },
    async runSlice(duration: number) {
      order.push(`${name} slice`);
      spin(busyMs);
      workload.slices.push(duration);
      ok += duration * 1000;
      seconds += duration;
    },
    result: () => ({ rate: ok / seconds, p50: 1, p99: 2, ok, failed: 0, seconds }),
    close() {
      workload.closed = true;
    },
  };
  return workload;
}

describe('interleaved measurement', () => {
  it('warms every workload up, then measures them in turn, slice after slice, for the whole duration each', async () => {
    const order: string[] = [];
    const bare = recording('bare', order);
    const stride = recording('stride', order);
    const [bareM, strideM] = await interleave([bare, stride], { connections: 32, warmupSeconds: 2, durationSeconds: 10 });
    assert.deepEqual(order, [
      'bare warm-up 2',
      'stride warm-up 2',
      ...Array.from({ length: 5 }, () => ['bare slice', 'stride slice']).flat(),
    ]);
    assert.deepEqual(stride.slices, [2, 2, 2, 2, 2]);
    assert.equal(strideM!.seconds, 10);
    assert.equal(strideM!.ok, 10_000);
    assert.equal(bareM!.rssMb, null, 'no server process, no memory figure');
    assert.equal(bareM!.cpu.serverLoopUs, null, 'no server process, no server CPU');
    assert.equal(bareM!.cpu.serverThreadsUs, null);
    assert.ok(bare.closed && stride.closed);
  });

  it('takes longer slices when asked, and no warm-up when there is none', async () => {
    const order: string[] = [];
    const flows = recording('flows', order);
    await interleave([flows], { connections: 32, warmupSeconds: 0, durationSeconds: 10 }, 5);
    assert.deepEqual(order, ['flows slice', 'flows slice']);
    assert.deepEqual(flows.slices, [5, 5]);
  });

  it('charges each workload the CPU time of its own slices, per success', async () => {
    const order: string[] = [];
    const idle = recording('idle', order);
    // 200 ms of this thread in each of two slices of 1 s (1,000 successes each): 200 µs per success.
    const busy = recording('busy', order, 200);
    const [idleM, busyM] = await interleave([idle, busy], { connections: 1, warmupSeconds: 0, durationSeconds: 2 }, 1);
    assert.ok(busyM!.cpu.serverLoopUs! >= 150 && busyM!.cpu.serverLoopUs! <= 400, `event loop ${busyM!.cpu.serverLoopUs} µs`);
    assert.ok(busyM!.cpu.driverUs >= 150, `this process ${busyM!.cpu.driverUs} µs`);
    assert.ok(idleM!.cpu.driverUs < 50, `the idle workload's slices cost little: ${idleM!.cpu.driverUs} µs`);
  });
});

describe('fixed requests (autocannon)', () => {
  let server: Server;
  let origin: string;

  before(async () => {
    // `/wait` answers 5 ms after the request; any other path at once.
    server = createServer((req, res) => {
      const answer = () => res.end('{"ok":true}');
      if (req.url === '/wait') setTimeout(answer, 5);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reports latencies in fractions of a millisecond, not whole milliseconds', async () => {
    const fast = fixedRequestWorkload(`${origin}/`, {}, 2, process.pid);
    const slow = fixedRequestWorkload(`${origin}/wait`, {}, 2, process.pid);
    const [fastM, slowM] = await interleave([fast, slow], { connections: 2, warmupSeconds: 0, durationSeconds: 1 }, 1);
    assert.ok(fastM!.ok > 100 && fastM!.failed === 0, `${fastM!.ok} answers, ${fastM!.failed} failed`);
    // An answer at once on loopback takes well under a millisecond: whole milliseconds would say 0.
    assert.ok(fastM!.p50 > 0 && fastM!.p50 < 5, `p50 ${fastM!.p50} ms`);
    assert.ok(fastM!.p99 >= fastM!.p50);
    assert.ok(slowM!.p50 >= 5 && slowM!.p50 < 50, `p50 ${slowM!.p50} ms`);
    assert.ok(slowM!.rate > 0 && slowM!.rate < 2 * (1000 / 5) + 1, `${slowM!.rate} req/s on 2 connections at 5 ms each at least`);
  });
});
