/**
 * One file of an archive read into steps (src/domain/takeout/read-files.ts): sleep levels as
 * stages — a stage log's short wakes laid over its stages, a classic log's restless as awake —
 * and weights in the archive's unit, each step one local date.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readFile, type ReadStep } from '../../../src/domain/takeout/read-files.js';
import { readProfile } from '../../../src/domain/takeout/profile.js';
import { profileCsv } from '../../support/takeout-archive.js';

const context = { file: 'Fitbit/Global Export Data/sleep-2024-01-01.json', zone: 'UTC', now: Date.parse('2025-01-01T00:00:00Z') / 1000, weightUnit: 'kg' as const };
const at = (iso: string) => Date.parse(`${iso}Z`) / 1000;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

it('lays a stage log\'s short wakes over its stages, and reads a classic log\'s restless as awake', () => {
  const stages = {
    dateOfSleep: '2024-01-02',
    levels: {
      data: [
        { dateTime: '2024-01-01T23:00:00.000', level: 'light', seconds: 3600 },
        { dateTime: '2024-01-02T00:00:00.000', level: 'deep', seconds: 1800 },
      ],
      shortData: [{ dateTime: '2024-01-01T23:30:00.000', level: 'wake', seconds: 90 }],
    },
  };
  const classic = {
    dateOfSleep: '2024-01-03',
    levels: {
      data: [
        { dateTime: '2024-01-03T01:00:00.000', level: 'asleep', seconds: 600 },
        { dateTime: '2024-01-03T01:10:00.000', level: 'restless', seconds: 120 },
        { dateTime: '2024-01-03T01:12:00.000', level: 'awake', seconds: 60 },
        { dateTime: '2024-01-03T01:13:00.000', level: 'asleep', seconds: 600 },
      ],
    },
  };
  const steps = readFile('sleep', json([stages, classic]), context) as Array<Extract<ReadStep, { kind: 'sleep' }>>;
  assert.deepEqual(steps.map((step) => step.day), [at('2024-01-02T00:00:00') / 86_400, at('2024-01-03T00:00:00') / 86_400]);
  assert.deepEqual(steps[0]!.sessions[0]!.stages, [
    { stage: 'light', start_time: at('2024-01-01T23:00:00'), end_time: at('2024-01-01T23:30:00') },
    { stage: 'awake', start_time: at('2024-01-01T23:30:00'), end_time: at('2024-01-01T23:31:30') },
    { stage: 'light', start_time: at('2024-01-01T23:31:30'), end_time: at('2024-01-02T00:00:00') },
    { stage: 'deep', start_time: at('2024-01-02T00:00:00'), end_time: at('2024-01-02T00:30:00') },
  ]);
  assert.deepEqual(steps[1]!.sessions[0]!.stages.map((stage) => [stage.stage, stage.end_time - stage.start_time]), [['light', 600], ['awake', 180], ['light', 600]]);
  assert.deepEqual(steps[1]!.names, [{ file: context.file, entry: 1 }]);
});

it('refuses a sleep log whose levels leave a gap or name an unknown level, naming the entry', () => {
  const gap = { dateOfSleep: '2024-01-02', levels: { data: [{ dateTime: '2024-01-01T23:00:00.000', level: 'light', seconds: 60 }, { dateTime: '2024-01-01T23:05:00.000', level: 'deep', seconds: 60 }] } };
  const odd = { dateOfSleep: '2024-01-02', levels: { data: [{ dateTime: '2024-01-01T23:00:00.000', level: 'dreaming', seconds: 60 }] } };
  const [step] = readFile('sleep', json([gap, odd]), context);
  assert.deepEqual(step!.skipped.map(({ entry, code }) => [entry, code]), [[0, 'bad_stages'], [1, 'bad_stages']]);
  assert.match(step!.skipped[0]!.reason, /levels\.data\/1 starts 240 seconds after the level before it ends/);
});

it('reads weights in the archive\'s unit, and the unit and zone from Profile.csv', () => {
  assert.deepEqual(readProfile(profileCsv('Europe/Berlin', 'POUND')), { timezone: 'Europe/Berlin', weightUnit: 'lb' });
  assert.deepEqual(readProfile(profileCsv('Mars/Base', 'STONE')), { timezone: null, weightUnit: 'stone' });
  const rows = [{ logId: 1, weight: 11.5, bmi: 22.1, date: '01/05/24', time: '07:00:00', source: 'Aria' }];
  const [step] = readFile('weight', json(rows), { ...context, weightUnit: 'stone' }) as Array<Extract<ReadStep, { kind: 'weight' }>>;
  assert.deepEqual(step!.weights, [{ time: at('2024-01-05T07:00:00'), kg_hundredths: 7303, fat_hundredths: null }]);
});
