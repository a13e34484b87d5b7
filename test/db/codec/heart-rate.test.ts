/** The packed heart-rate day (db/codec/heart-rate-minutes.ts, db/codec/heart-rate-summary.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { emptyHeartRateDay, packHeartRateMinutes, unpackHeartRateAverages, unpackHeartRateMinutes, type HeartRateMinutes } from '../../../src/db/codec/heart-rate-minutes.js';
import { lowestHalfHour } from '../../../src/domain/resting-heart-rate.js';
import { packHeartRateDay, packTotal, summarize, unpackSummary, unpackTotal } from '../../../src/db/codec/heart-rate-summary.js';
import { dayOf, wakingDayReadings } from '../../../bench/lib/heart-rate-data.js';

/** A day: each minute absent or holding min ≤ avg ≤ max within 25..250. */
const day = fc
  .array(fc.option(fc.tuple(fc.integer({ min: 25, max: 250 }), fc.integer({ min: 25, max: 250 }), fc.integer({ min: 25, max: 250 })), { freq: 3 }), { minLength: 1440, maxLength: 1440 })
  .map((minutes) => {
    const result = emptyHeartRateDay();
    minutes.forEach((values, m) => {
      if (values === null) return;
      const [min, avg, max] = [...values].sort((a, b) => a - b) as [number, number, number];
      result.avg[m] = avg;
      result.min[m] = min;
      result.max[m] = max;
    });
    return result;
  });

function naiveTotal(d: HeartRateMinutes) {
  const present = [...d.avg.keys()].filter((m) => d.avg[m] !== 0);
  return {
    minutes: present.length,
    sum: present.reduce((s, m) => s + d.avg[m]!, 0),
    min: present.length ? Math.min(...present.map((m) => d.min[m]!)) : 0,
    max: present.length ? Math.max(...present.map((m) => d.max[m]!)) : 0,
  };
}

it('gives back every minute, its averages alone, and the summary of any day (property)', () => {
  fc.assert(
    fc.property(day, (d) => {
      const packed = packHeartRateDay(d, lowestHalfHour);
      assert.deepEqual(unpackHeartRateMinutes(packed.minutes), d);
      assert.deepEqual(unpackHeartRateAverages(packed.minutes), d.avg);
      assert.deepEqual(unpackSummary(packed.hours), summarize(d));
      const total = unpackTotal(packed.total);
      assert.deepEqual({ minutes: total.minutes, sum: total.sum, min: total.min, max: total.max }, naiveTotal(d));
      const summary = summarize(d);
      const resting = lowestHalfHour(summary.quarterCounts, summary.quarterSums);
      assert.equal(total.restingTenths, resting === null ? 0 : Math.round(resting * 10));
    }),
    { numRuns: 200 },
  );
});

it('packs extreme days: empty, one minute, every minute at each bound', () => {
  assert.equal(packHeartRateMinutes(emptyHeartRateDay()).length, 0, 'an empty day packs to nothing');
  assert.deepEqual(unpackHeartRateMinutes(new Uint8Array(0)), emptyHeartRateDay());
  for (const [avg, min, max] of [[25, 25, 25], [250, 250, 250], [25, 25, 250], [250, 25, 250], [137, 25, 250]] as const) {
    const d = emptyHeartRateDay();
    d.avg.fill(avg);
    d.min.fill(min);
    d.max.fill(max);
    assert.deepEqual(unpackHeartRateMinutes(packHeartRateDay(d, lowestHalfHour).minutes), d);
    const one = emptyHeartRateDay();
    one.avg[1439] = avg;
    one.min[1439] = min;
    one.max[1439] = max;
    assert.deepEqual(unpackHeartRateMinutes(packHeartRateDay(one, lowestHalfHour).minutes), one);
  }
});

it('keeps the largest total in 58 bits, exactly', () => {
  const largest = { minutes: 1440, sum: 1440 * 250, min: 250, max: 250, restingTenths: 2500 };
  assert.deepEqual(unpackTotal(packTotal(largest)), largest);
  assert.ok(packTotal(largest) < 2n ** 58n);
  assert.deepEqual(unpackTotal(packTotal(largest).toString()), largest, 'as PostgreSQL sends it, text');
});

it('gives back each field of a total on its own, at the top of its bits and beside the others', () => {
  const fields = { minutes: 2047, sum: 2 ** 19 - 1, min: 255, max: 255, restingTenths: 4095 };
  const zero = { minutes: 0, sum: 0, min: 0, max: 0, restingTenths: 0 };
  for (const [name, top] of Object.entries(fields)) {
    const alone = { ...zero, [name]: top };
    assert.deepEqual(unpackTotal(packTotal(alone)), alone, name);
    const others = { ...fields, [name]: 0 };
    assert.deepEqual(unpackTotal(packTotal(others).toString()), others, `all but ${name}`);
  }
  for (let i = 0; i < 200; i++) {
    const total = { minutes: (i * 7) % 1441, sum: (i * 1789) % 360_001, min: (i * 13) % 256, max: (i * 29) % 256, restingTenths: (i * 37) % 2501 };
    assert.deepEqual(unpackTotal(packTotal(total)), total);
  }
});

it('packs 16 waking hours of readings every 5 seconds in under 1,150 bytes of minutes and 240 of summary', () => {
  const start = Date.UTC(2026, 10, 26) / 1000;
  for (let seed = 1; seed <= 5; seed++) {
    const d = dayOf(wakingDayReadings(start, 5, seed), start);
    const packed = packHeartRateDay(d, lowestHalfHour);
    assert.ok(packed.minutes.length < 1150, `${packed.minutes.length} bytes of minutes`);
    assert.ok(packed.hours.length < 240, `${packed.hours.length} bytes of summary`);
  }
});

it('refuses packed days that are cut short, too long or of an unknown format', () => {
  const d = emptyHeartRateDay();
  d.avg.fill(70, 0, 100);
  d.min.fill(60, 0, 100);
  d.max.fill(80, 0, 100);
  const packed = packHeartRateMinutes(d);
  assert.throws(() => unpackHeartRateMinutes(Uint8Array.of(7, 1, 2)), /unknown format/);
  assert.throws(() => unpackHeartRateMinutes(Uint8Array.of(0, 1, 0, 2, 0x80)), /ends inside a number/);
  assert.throws(() => unpackHeartRateMinutes(Uint8Array.of(0, 1, 0x9f, 0x0b, 2, 70, 0, 0, 0, 0)), /more than 1440 minutes/);
  assert.throws(() => unpackHeartRateMinutes(packed.subarray(0, packed.length - 3)));
});
