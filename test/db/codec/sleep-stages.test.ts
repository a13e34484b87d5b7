/** The packed stages of a sleep session (db/codec/sleep-stages.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { asleepSeconds, packStages, SLEEP_STAGE_CODES, unpackStages, type SleepStage } from '../../../src/db/codec/sleep-stages.js';

function stagesOf(start: number, lengths: number[]): SleepStage[] {
  let time = start;
  return lengths.map((length, i) => {
    const stage = { stage: SLEEP_STAGE_CODES[(i * 3 + 1) % 4]!, start_time: time, end_time: time + length };
    time += length;
    return stage;
  });
}

it('gives back every stage, whatever the unit of their lengths', () => {
  const start = 1_718_000_017;
  for (const lengths of [[60], [1], [86_400], [30, 90, 600], [60, 120, 1800, 7200], [1, 59, 3600, 17], Array.from({ length: 2880 }, () => 30)]) {
    const stages = stagesOf(start, lengths);
    assert.deepEqual(unpackStages(start, packStages(stages)), stages, lengths.slice(0, 5).join(' '));
  }
});

it('packs a night of whole-minute stages in about a byte a stage', () => {
  // Forty stages of 5 to 30 minutes.
  const night = stagesOf(1_718_000_000, Array.from({ length: 40 }, (_, i) => (5 + ((i * 7) % 26)) * 60));
  assert.equal(packStages(night).length, 41);
  // In 30-second epochs a stage of up to 15.5 minutes is one byte, a longer one (up to 68) two.
  const epochs = stagesOf(1_718_000_000, Array.from({ length: 40 }, (_, i) => (10 + ((i * 7) % 50)) * 30));
  const long = epochs.filter((stage) => stage.end_time - stage.start_time > 31 * 30).length;
  assert.equal(packStages(epochs).length, 1 + 40 + long);
});

it('refuses what it cannot pack, and a packed form cut short', () => {
  assert.throws(() => packStages([{ stage: 'nap' as never, start_time: 0, end_time: 60 }]), /no known kind/);
  assert.throws(() => packStages([{ stage: 'deep', start_time: 60, end_time: 60 }]), /no length/);
  assert.throws(() => unpackStages(0, Uint8Array.of(60, 0x80)), /ends inside a number/);
});

it('counts the seconds asleep of packed stages as the unpacked stages do, awake left out', () => {
  const start = 1_718_000_017;
  const asleepOf = (stages: SleepStage[]) => stages.filter((s) => s.stage !== 'awake').reduce((sum, s) => sum + s.end_time - s.start_time, 0);
  for (const lengths of [[60], [1, 59, 3600, 17], [30, 90, 600, 1800], Array.from({ length: 41 }, (_, i) => (5 + ((i * 7) % 26)) * 60), [86_400]]) {
    const stages = stagesOf(start, lengths);
    assert.equal(asleepSeconds(packStages(stages)), asleepOf(stages), lengths.slice(0, 5).join(' '));
  }
  const awake = [{ stage: 'awake' as const, start_time: start, end_time: start + 3600 }];
  assert.equal(asleepSeconds(packStages(awake)), 0);
  assert.throws(() => asleepSeconds(Uint8Array.of(60, 0x85)), /ends inside a number/);
});
