/**
 * Batched calls (db/batched-calls.ts): the calls of one turn of the event loop reach the runner
 * together, at most `max` at a time; each caller gets its own answer; a failing run fails only the
 * calls it left unanswered.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { batchedCalls } from '../../src/db/batched-calls.js';

it('hands the calls of one turn over together, in order, and the next turn’s as another batch', async () => {
  const batches: number[][] = [];
  const double = batchedCalls<number, number>((calls) => {
    batches.push(calls.map((call) => call.input));
    for (const call of calls) call.resolve(call.input * 2);
  }, 100);
  const first = [1, 2, 3].map(double);
  assert.deepEqual(batches, [], 'nothing runs before the turn ends');
  assert.deepEqual(await Promise.all(first), [2, 4, 6]);
  assert.deepEqual(await Promise.all([double(4), double(5)]), [8, 10]);
  assert.deepEqual(batches, [[1, 2, 3], [4, 5]]);
});

it('starts a batch as soon as max calls wait, and the rest at the end of the turn', async () => {
  const sizes: number[] = [];
  const echo = batchedCalls<number, number>(async (calls) => {
    sizes.push(calls.length);
    await nextTurn();
    for (const call of calls) call.resolve(call.input);
  }, 4);
  const inputs = Array.from({ length: 10 }, (_, i) => i);
  const pending = inputs.map(echo);
  assert.deepEqual(sizes, [4, 4], 'two full batches are running already');
  assert.deepEqual(await Promise.all(pending), inputs);
  assert.deepEqual(sizes, [4, 4, 2]);
});

it('a run that fails fails the calls it did not answer, with its error; thrown or rejected', async () => {
  for (const kind of ['throws', 'rejects'] as const) {
    const lookup = batchedCalls<string, string>((calls) => {
      calls[0]!.resolve('answered before the failure');
      calls[1]!.reject(new Error('its own failure'));
      const failure = new Error(`the batch ${kind}`);
      if (kind === 'throws') throw failure;
      return Promise.reject(failure);
    }, 10);
    const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map(lookup));
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['answered before the failure', 'its own failure', `the batch ${kind}`, `the batch ${kind}`],
    );
  }
});
