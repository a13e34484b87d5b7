/**
 * Every encoding of db/codec/ through its one interface (codec.ts), for random values: what is
 * decoded is what was encoded, and iterating the bytes walks the same items as decoding them.
 * Also the rule all framed encodings share (frame.ts).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import type { Codec } from '../../../src/db/codec/codec.js';
import { DEFLATED, DEFAULT_STRATEGY, FILTERED, frame, RAW, unframe } from '../../../src/db/codec/frame.js';
import { emptyHeartRateDay, heartRateMinutes } from '../../../src/db/codec/heart-rate-minutes.js';
import { ABSENT, minuteValues } from '../../../src/db/codec/minute-values.js';
import { SLEEP_STAGE_CODES, sleepStages } from '../../../src/db/codec/sleep-stages.js';

/** decode(encode(value)) equals value, and iterate walks what `itemsOf` lists of it. */
function roundTrips<Value, Item>(codec: Codec<Value, Item>, values: fc.Arbitrary<Value>, itemsOf: (value: Value) => Item[]) {
  fc.assert(
    fc.property(values, (value) => {
      const bytes = codec.encode(value);
      assert.deepEqual(codec.decode(bytes), value);
      assert.deepEqual([...codec.iterate(bytes)], itemsOf(value));
    }),
    { numRuns: 150 },
  );
}

/** Days whose minutes come in runs, as devices send them, and days of scattered minutes. */
const presence = fc.oneof(
  fc.array(fc.boolean(), { minLength: 1440, maxLength: 1440 }),
  fc.array(fc.tuple(fc.integer({ min: 0, max: 1439 }), fc.integer({ min: 1, max: 600 })), { maxLength: 6 }).map((runs) => {
    const present = new Array<boolean>(1440).fill(false);
    for (const [start, length] of runs) present.fill(true, start, Math.min(1440, start + length));
    return present;
  }),
);

it('gives back any day of minute values, and iterates its present minutes in order', () => {
  const value = fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 200 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 31 - 1 }) });
  const days = fc.tuple(presence, fc.array(value, { minLength: 1440, maxLength: 1440 })).map(([present, values]) => Int32Array.from(values, (v, m) => (present[m] ? v : ABSENT)));
  roundTrips(minuteValues, days, (day) => [...day.entries()].filter(([, v]) => v !== ABSENT).map(([minute, v]) => ({ minute, value: v })));
});

it('gives back any heart-rate day, and iterates its minutes with data in order', () => {
  const readings = fc.array(fc.tuple(fc.integer({ min: 25, max: 250 }), fc.integer({ min: 25, max: 250 }), fc.integer({ min: 25, max: 250 })), { minLength: 1440, maxLength: 1440 });
  const days = fc.tuple(presence, readings).map(([present, values]) => {
    const day = emptyHeartRateDay();
    values.forEach((triple, m) => {
      if (!present[m]) return;
      const [min, avg, max] = [...triple].sort((a, b) => a - b) as [number, number, number];
      day.avg[m] = avg;
      day.min[m] = min;
      day.max[m] = max;
    });
    return day;
  });
  roundTrips(heartRateMinutes, days, (day) =>
    [...day.avg.keys()].filter((m) => day.avg[m] !== 0).map((minute) => ({ minute, avg: day.avg[minute]!, min: day.min[minute]!, max: day.max[minute]! })),
  );
});

it('gives back any night of sleep stages, whatever the unit of their lengths', () => {
  const seconds = fc.oneof(fc.integer({ min: 1, max: 600 }).map((n) => n * 60), fc.integer({ min: 1, max: 200 }).map((n) => n * 30), fc.integer({ min: 1, max: 90_000 }));
  const stage = fc.tuple(fc.constantFrom(...SLEEP_STAGE_CODES), seconds).map(([name, length]) => ({ stage: name, seconds: length }));
  const nights = fc.array(stage, { minLength: 1, maxLength: 60 });
  roundTrips(sleepStages, nights, (night) => night);
});

it('frames a body raw or deflated, whichever is shorter, and gives it back', () => {
  fc.assert(
    fc.property(fc.oneof(fc.uint8Array({ maxLength: 400 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2000 }).map((a) => Uint8Array.from(a))), fc.constantFrom(DEFAULT_STRATEGY, FILTERED), (body, strategy) => {
      const framed = frame(body, strategy);
      assert.deepEqual(new Uint8Array(unframe(framed, 'a body')), body);
      if (body.length === 0) return assert.equal(framed.length, 0);
      assert.ok(framed.length <= body.length + 1, 'never longer than the body and its format byte');
      assert.equal(framed[0], framed.length - 1 < body.length ? DEFLATED : RAW);
    }),
    { numRuns: 300 },
  );
  assert.throws(() => unframe(Uint8Array.of(2, 0), 'a body'), /a body has the unknown format 2/);
});
