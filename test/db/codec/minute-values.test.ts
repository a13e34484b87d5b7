/** The packed minute values of the series store (db/codec/minute-values.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ABSENT, emptyDay, packDay, unpackHours, unpackMinutes } from '../../../src/db/codec/minute-values.js';

it('gives back every minute, absent ones absent, and the sums of its hours and day', () => {
  const days = [emptyDay(), emptyDay(), emptyDay(), emptyDay()];
  days[1]!.fill(0);
  days[2]![0] = 5;
  days[2]![1439] = 2 ** 31 - 1;
  days[2]![700] = 0;
  for (let m = 0; m < 1440; m++) days[3]![m] = m % 3 === 0 ? ABSENT : (m * 37) % 1001;
  for (const day of days) {
    const packed = packDay(day);
    assert.deepEqual(unpackMinutes(packed.minutes), day);
    const hours = Array.from({ length: 24 }, (_, h) => day.slice(h * 60, h * 60 + 60).reduce((sum, v) => sum + (v === ABSENT ? 0 : v), 0));
    assert.deepEqual(unpackHours(packed.hours), hours);
    assert.equal(packed.total, hours.reduce((a, b) => a + b, 0));
  }
  assert.equal(packDay(days[0]!).minutes.length, 0, 'an empty day packs to nothing');
});

it('packs a day of minute steps in about a byte and a half a minute', () => {
  const day = emptyDay().map((_, m) => (m * 7919) % 140);
  assert.ok(packDay(day).minutes.length < 1440 * 1.6);
});

it('refuses a packed day that ends inside a number or holds more than a day', () => {
  assert.throws(() => unpackMinutes(Uint8Array.of(0, 2, 0x80)), /ends inside a number/);
  assert.throws(() => unpackMinutes(Uint8Array.of(0, 0x9f, 0x0b, 2, 1, 1)), /more than 1440 minutes/);
});

it('deflates the minutes when that makes them shorter, and keeps a short day as runs', async () => {
  const { DEFLATED, RAW } = await import('../../../src/db/codec/frame.js');
  const { packRuns } = await import('../../../src/db/codec/minute-values.js');
  const sparse = emptyDay();
  sparse[600] = 42;
  assert.equal(packDay(sparse).minutes[0], RAW);
  assert.deepEqual(packDay(sparse).minutes.subarray(1), packRuns(sparse));
  // Waking hours of a pedometer: mostly zeros, walks of a hundred steps a minute.
  const walker = emptyDay();
  for (let m = 420; m < 1380; m++) walker[m] = m % 97 < 20 ? 90 + (m % 13) : 0;
  const packed = packDay(walker).minutes;
  assert.equal(packed[0], DEFLATED);
  assert.ok(packed.length < packRuns(walker).length / 2, `${packed.length} bytes`);
  assert.deepEqual(unpackMinutes(packed), walker);
});

it('gives back any day it packed', async () => {
  const fc = (await import('fast-check')).default;
  const minute = fc.oneof({ weight: 3, arbitrary: fc.constant(ABSENT) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 200 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 31 - 1 }) });
  fc.assert(
    fc.property(fc.array(minute, { minLength: 1440, maxLength: 1440 }), (values) => {
      const day = Int32Array.from(values);
      assert.deepEqual(unpackMinutes(packDay(day).minutes), day);
    }),
    { numRuns: 200 },
  );
});

it('refuses minutes of an unknown format', () => {
  assert.throws(() => unpackMinutes(Uint8Array.of(7, 1, 1, 1)), /unknown format 7/);
});
