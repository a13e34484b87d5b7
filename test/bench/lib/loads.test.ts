import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interleave, type Workload } from '../../../bench/lib/loads.js';

/** A workload that records when it ran and "measures" one success per millisecond asked for. */
function recording(name: string, order: string[]): Workload & { slices: number[]; closed: boolean } {
  let ok = 0;
  let seconds = 0;
  const workload = {
    pid: null,
    slices: [] as number[],
    closed: false,
    async warmUp(duration: number) {
      order.push(`${name} warm-up ${duration}`);
    },
    async runSlice(duration: number) {
      order.push(`${name} slice`);
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
    assert.ok(bare.closed && stride.closed);
  });

  it('takes longer slices when asked, and no warm-up when there is none', async () => {
    const order: string[] = [];
    const flows = recording('flows', order);
    await interleave([flows], { connections: 32, warmupSeconds: 0, durationSeconds: 10 }, 5);
    assert.deepEqual(order, ['flows slice', 'flows slice']);
    assert.deepEqual(flows.slices, [5, 5]);
  });
});
