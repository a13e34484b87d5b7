/** The packed day of the series store (db/series-day.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ABSENT, emptyDay, packDay, unpackHours, unpackMinutes } from '../../src/db/series-day.js';

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
