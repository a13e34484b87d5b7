/**
 * STRIDE_PLAIN (src/speed-switches.ts): the names it takes, and, in a process started with it as
 * `npm run bench` starts Stride, every mechanism on its plain path; a name that is no mechanism
 * stops the process with a message naming the ones there are.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { it } from 'node:test';
import { isOn, plainMechanisms, SPEED_MECHANISMS } from '../src/speed-switches.js';

const run = promisify(execFile);
const src = (path: string) => fileURLToPath(new URL(`../src/${path}`, import.meta.url));

it('reads a list of mechanisms, or all of them, and refuses any other name', () => {
  assert.deepEqual([...plainMechanisms(undefined)], []);
  assert.deepEqual([...plainMechanisms('')], []);
  assert.deepEqual([...plainMechanisms(' dpop-keys, bucket-plans ')], ['dpop-keys', 'bucket-plans']);
  assert.deepEqual([...plainMechanisms('all')].sort(), Object.keys(SPEED_MECHANISMS).sort());
  assert.throws(() => plainMechanisms('dpop-keys,dpop-key'), /STRIDE_PLAIN names "dpop-key", which is not a speed mechanism: use all or some of dpop-keys, heart-rate-answers/);
  // The test processes run with every mechanism on.
  for (const name of Object.keys(SPEED_MECHANISMS)) assert.ok(isOn(name as keyof typeof SPEED_MECHANISMS), name);
});

/** Imports each mechanism's module in a process of its own with STRIDE_PLAIN=`plain`, and says which are on. */
async function mechanismsOn(plain: string): Promise<Record<string, boolean>> {
  const script = `
    const [dpop, keys, answers, plans, steps, days, fitbitDates] = await Promise.all([
      import(${JSON.stringify(src('oauth/dpop.js'))}), import(${JSON.stringify(src('oauth/dpop-kept-keys.js'))}),
      import(${JSON.stringify(src('domain/heart-rate-answers.js'))}), import(${JSON.stringify(src('domain/kept-plans.js'))}),
      import(${JSON.stringify(src('calendar/step-buckets.js'))}), import(${JSON.stringify(src('store/minute-days.js'))}),
      import(${JSON.stringify(src('api/fitbit/dates.js'))}),
    ]);
    console.log(JSON.stringify({
      'dpop-keys': dpop.keptKeys !== keys.NO_KEPT_KEYS,
      'heart-rate-answers': answers.heartRateAnswers() !== answers.NO_KEPT_ANSWERS,
      'bucket-plans': plans.keptPlans() !== plans.planOf,
      'zone-offsets': steps.spansOfChunk !== steps.chunkSpans,
      'minute-days': days.switchedMinuteDays() !== days.PLAIN_MINUTE_DAYS,
      'fitbit-dates': fitbitDates.keptDates({ periods: ['1d'], maxDays: 1 }).name !== 'datesEachTime',
    }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, STRIDE_PLAIN: plain } });
  return JSON.parse(stdout) as Record<string, boolean>;
}

it('runs the plain path of each mechanism STRIDE_PLAIN names, in the process it starts', async () => {
  const names = Object.keys(SPEED_MECHANISMS);
  // Two processes, each with half the names: every mechanism is seen on in one and off in the other.
  const halves = [names.filter((_, i) => i % 2 === 0), names.filter((_, i) => i % 2 === 1)];
  const seen = await Promise.all(halves.map((half) => mechanismsOn(half.join(','))));
  halves.forEach((half, i) => assert.deepEqual(seen[i], Object.fromEntries(names.map((name) => [name, !half.includes(name)])), half.join(',')));
});

it('stops a process whose STRIDE_PLAIN names no mechanism, saying which there are', async () => {
  await assert.rejects(run(process.execPath, [src('stride.cjs'), 'serve'], { env: { ...process.env, STRIDE_PLAIN: 'dpop', DATABASE_URL: 'sqlite::memory:' } }), (error: Error & { stderr: string }) => {
    assert.match(error.stderr, /STRIDE_PLAIN names "dpop", which is not a speed mechanism/);
    return true;
  });
});
