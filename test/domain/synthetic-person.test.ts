import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DateTime } from 'luxon';
import { NIGHT_SHIFT_WORKER, OFFICE_WORKER, RUNNER, synthesizePerson, TRAVELLER, WEARABLE, type Life, type PersonData } from '../../src/domain/synthetic-person.js';

// 2026-11-20 15:37:12 UTC: 90 days back reach over the end of summer time in Europe and America.
const NOW = 1_795_707_432;

function minutesOf(samples: ReadonlyArray<{ start_time: number }>): Set<number> {
  return new Set(samples.map((sample) => sample.start_time));
}

function checkShapes(data: PersonData): void {
  for (const { start_time, value } of data.steps) {
    assert.ok(start_time % 60 === 0 && start_time < NOW && Number.isInteger(value) && value > 0 && value <= 1000);
  }
  for (const { start_time, value } of data.calories) {
    assert.ok(start_time % 60 === 0 && start_time < NOW && value >= 0 && value <= 100 && Math.round(value * 10) === value * 10);
  }
  for (const { time, bpm } of data.heartrate) assert.ok(time < NOW && Number.isInteger(bpm) && bpm >= 25 && bpm <= 250);
  for (const { time, kg, fat_percent } of data.weight) assert.ok(time < NOW && kg >= 20 && kg <= 400 && fat_percent >= 1 && fat_percent <= 75);
  assert.equal(minutesOf(data.steps).size, data.steps.length, 'one steps sample per minute');
  assert.equal(minutesOf(data.calories).size, data.calories.length, 'one calories sample per minute');
  let previousEnd = 0;
  for (const session of data.sleep) {
    assert.ok(session.start_time >= previousEnd, 'sessions do not overlap');
    assert.ok(session.end_time - session.start_time <= 86_400 && session.end_time <= NOW);
    assert.equal(session.stages[0]!.start_time, session.start_time);
    assert.equal(session.stages.at(-1)!.end_time, session.end_time);
    for (let i = 1; i < session.stages.length; i++) assert.equal(session.stages[i]!.start_time, session.stages[i - 1]!.end_time, 'stages are contiguous');
    previousEnd = session.end_time;
  }
}

function asleepAt(data: PersonData, t: number): boolean {
  return data.sleep.some((session) => t >= session.start_time && t < session.end_time);
}

describe('synthetic person', () => {
  for (const [name, life] of [['office worker', OFFICE_WORKER], ['runner', RUNNER], ['night-shift worker', NIGHT_SHIFT_WORKER], ['traveller', TRAVELLER]] as Array<[string, Life]>) {
    it(`makes 90 days of every kind in the shapes the API takes (${name})`, () => {
      const data = synthesizePerson(life, NOW, 90, 7);
      checkShapes(data);
      assert.ok(data.sleep.length >= 85, `${data.sleep.length} nights`);
      assert.ok(data.weight.length >= 50 && data.weight.length < 90, `${data.weight.length} weighings`);
      assert.ok(data.steps.length > 90 * 60, `${data.steps.length} minutes of steps`);
      assert.ok(!data.steps.some((sample) => asleepAt(data, sample.start_time)), 'no steps while asleep');
    });
  }

  it('sleeps across midnight for a day worker and by day for a night-shift worker', () => {
    const office = synthesizePerson(OFFICE_WORKER, NOW, 30, 3);
    const crossing = office.sleep.filter((s) => DateTime.fromSeconds(s.start_time, { zone: 'Europe/Berlin' }).toISODate() !== DateTime.fromSeconds(s.end_time, { zone: 'Europe/Berlin' }).toISODate());
    assert.ok(crossing.length >= 20, `${crossing.length} of ${office.sleep.length} nights cross midnight`);
    const night = synthesizePerson(NIGHT_SHIFT_WORKER, NOW, 30, 3);
    for (const session of night.sleep) {
      const start = DateTime.fromSeconds(session.start_time, { zone: 'Asia/Kolkata' });
      assert.ok(start.hour >= 6 && start.hour <= 11, `night-shift sleep starts at ${start.toISOTime()}`);
    }
  });

  it('has a heart rate that follows activity and sleep', () => {
    const data = synthesizePerson(RUNNER, NOW, 30, 5);
    const bpmAt = new Map(data.heartrate.map((reading) => [reading.time - (reading.time % 60), reading.bpm]));
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const running = data.steps.filter((sample) => sample.value >= 150).map((sample) => bpmAt.get(sample.start_time + 240)).filter((bpm): bpm is number => bpm !== undefined);
    const asleep = data.heartrate.filter((reading) => asleepAt(data, reading.time)).map((reading) => reading.bpm);
    assert.ok(running.length > 100 && asleep.length > 1000);
    assert.ok(mean(running) > mean(asleep) + 40, `running ${mean(running)} bpm against asleep ${mean(asleep)}`);
  });

  it('lives the traveller\'s second half in the new zone', () => {
    const data = synthesizePerson(TRAVELLER, NOW, 90, 2);
    const wakeHours = (zone: string, sessions: PersonData['sleep']) => sessions.map((s) => DateTime.fromSeconds(s.end_time, { zone }).hour);
    assert.ok(wakeHours('America/New_York', data.sleep.slice(5, 40)).every((hour) => hour >= 6 && hour <= 9));
    assert.ok(wakeHours('Asia/Tokyo', data.sleep.slice(-40)).every((hour) => hour >= 6 && hour <= 9));
  });

  it('makes the same person from the same seed, and another from another', () => {
    assert.deepEqual(synthesizePerson(OFFICE_WORKER, NOW, 5, 11), synthesizePerson(OFFICE_WORKER, NOW, 5, 11));
    assert.notDeepEqual(synthesizePerson(OFFICE_WORKER, NOW, 5, 11).steps, synthesizePerson(OFFICE_WORKER, NOW, 5, 12).steps);
  });

  it('reads the heart every 20 s while awake with a wearable, each reading off the trend, and once a minute asleep', () => {
    const data = synthesizePerson(OFFICE_WORKER, NOW, 7, 3, WEARABLE);
    checkShapes(data);
    const byMinute = new Map<number, number[]>();
    for (const { time, bpm } of data.heartrate) byMinute.set(time - (time % 60), [...(byMinute.get(time - (time % 60)) ?? []), bpm]);
    // The minute of NOW has only the readings before it.
    const awake = [...byMinute].filter(([minute]) => !asleepAt(data, minute) && minute + 60 <= NOW);
    const asleep = [...byMinute].filter(([minute]) => asleepAt(data, minute));
    assert.ok(awake.length > 5 * 14 * 60 && asleep.length > 5 * 6 * 60);
    assert.ok(awake.every(([, readings]) => readings.length === 3), 'three readings a waking minute');
    assert.ok(asleep.every(([, readings]) => readings.length === 1), 'one a minute asleep');
    const spread = awake.filter(([, readings]) => Math.max(...readings) > Math.min(...readings)).length;
    assert.ok(spread > awake.length * 0.7, `the readings of most waking minutes differ (${spread} of ${awake.length})`);
    assert.ok(awake.every(([, readings]) => Math.max(...readings) - Math.min(...readings) <= 2 * WEARABLE.heartRateNoise + 1));
  });
});
