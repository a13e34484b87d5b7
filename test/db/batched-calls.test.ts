/**
 * Batched calls (db/batched-calls.ts): the calls of one turn of the event loop reach the runner
 * together, at most `max` at a time; each caller gets its own answer; after a failing run the calls
 * it left unanswered run again alone, so one bad call fails only itself (unless the database is away).
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

it('a run that fails runs the calls it did not answer again, each alone; thrown or rejected', async () => {
  for (const kind of ['throws', 'rejects'] as const) {
    const batches: string[][] = [];
    const lookup = batchedCalls<string, string>((calls) => {
      batches.push(calls.map((call) => call.input));
      const fail = (message: string) => {
        if (kind === 'throws') throw new Error(message);
        return Promise.reject(new Error(message));
      };
      if (calls.length === 1) {
        const [call] = calls;
        if (call!.input === 'd') return fail('d fails alone too');
        call!.resolve(`${call!.input} alone`);
        return;
      }
      calls[0]!.resolve('answered before the failure');
      calls[1]!.reject(new Error('its own failure'));
      return fail(`the batch ${kind}`);
    }, 10);
    const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map(lookup));
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['answered before the failure', 'its own failure', 'c alone', 'd fails alone too'],
    );
    assert.deepEqual(batches, [['a', 'b', 'c', 'd'], ['c'], ['d']], 'only the unanswered calls, once each');
  }
});

it('fails the unanswered calls with the batch’s error when runAloneAfter says so', async () => {
  const batches: number[] = [];
  const busy = Object.assign(new Error('busy'), { code: 'BUSY' });
  const lookup = batchedCalls<string, string>(
    (calls) => {
      batches.push(calls.length);
      throw calls.length > 1 ? busy : new Error('other');
    },
    10,
    { runAloneAfter: (error) => (error as { code?: string }).code !== 'BUSY' },
  );
  const results = await Promise.allSettled(['a', 'b'].map(lookup));
  assert.deepEqual(results.map((r) => r.status === 'rejected' && r.reason), [busy, busy]);
  assert.deepEqual(batches, [2]);
});

it('by default does not run the calls alone after the database turned out to be unavailable', async () => {
  const batches: number[] = [];
  // What node-postgres throws when the server refuses the connection.
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const lookup = batchedCalls<string, string>((calls) => {
    batches.push(calls.length);
    return Promise.reject(refused);
  }, 10);
  const results = await Promise.allSettled(['a', 'b', 'c'].map(lookup));
  assert.deepEqual(results.map((r) => r.status === 'rejected' && r.reason), [refused, refused, refused]);
  assert.deepEqual(batches, [3], 'one attempt for the batch, none alone');
});
