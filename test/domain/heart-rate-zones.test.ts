/**
 * Heart-rate zones (domain/heart-rate-zones.ts): the maximum heart rate from the profile, each
 * zone's bounds in whole beats, a minute's zone exactly by its share of the maximum, and active
 * zone minutes.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { activeZoneMinutesOf } from '../../src/domain/daily-activity.js';
import { CARDIO, FAT_BURN, OUT_OF_RANGE, PEAK, ZONE_NAMES, maxHeartRateOn, zoneOf, zonesOf } from '../../src/domain/heart-rate-zones.js';
import { MAX_BPM, MIN_BPM } from '../../src/store/series-writer.js';

it('takes the maximum heart rate from the profile, else 220 − age in the year of the date, else none', () => {
  assert.equal(maxHeartRateOn({ max_heart_rate: 187, birth_year: 1980 }, 2024), 187);
  assert.equal(maxHeartRateOn({ max_heart_rate: null, birth_year: 1980 }, 2024), 176);
  assert.equal(maxHeartRateOn({ max_heart_rate: null, birth_year: 1980 }, 2025), 175, 'a beat lower each year');
  assert.equal(maxHeartRateOn({ max_heart_rate: null, birth_year: 2024 }, 2024), 220);
  assert.equal(maxHeartRateOn({ max_heart_rate: null, birth_year: 2024 }, 2020), 220, 'a date before the year of birth counts age 0');
  assert.equal(maxHeartRateOn({ max_heart_rate: null, birth_year: null }, 2024), null);
});

it('bounds each zone in whole beats, from ⌈50 %⌉, ⌈70 %⌉ and ⌈85 %⌉ of the maximum', () => {
  assert.deepEqual(zonesOf(190).bounds, [
    { min: MIN_BPM, max: 94 },
    { min: 95, max: 132 },
    { min: 133, max: 161 },
    { min: 162, max: 190 },
  ]);
  // Shares that land on a whole beat start there: 50 % of 200 is 100, 70 % is 140, 85 % is 170.
  assert.deepEqual(zonesOf(200).bounds, [
    { min: MIN_BPM, max: 99 },
    { min: 100, max: 139 },
    { min: 140, max: 169 },
    { min: 170, max: 200 },
  ]);
  assert.deepEqual(zonesOf(181).bounds.map((zone) => zone.min), [MIN_BPM, 91, 127, 154]);
});

it('puts a minute in a zone exactly by its share of the maximum, every beat in one zone and the bounds touching', () => {
  // Every maximum the profile allows or an age gives, every average a minute can hold.
  for (let maximum = 94; maximum <= 230; maximum++) {
    const zones = zonesOf(maximum);
    for (let zone = 1; zone < ZONE_NAMES.length; zone++) assert.equal(zones.bounds[zone]!.min, zones.bounds[zone - 1]!.max + 1, `${maximum}: zone ${zone}`);
    for (let bpm = MIN_BPM; bpm <= MAX_BPM; bpm++) {
      // The share in whole numbers: no rounding of a float can move a beat across a bound.
      const expected = bpm * 100 >= 85 * maximum ? PEAK : bpm * 100 >= 70 * maximum ? CARDIO : bpm * 100 >= 50 * maximum ? FAT_BURN : OUT_OF_RANGE;
      assert.equal(zoneOf(zones, bpm), expected, `${bpm} bpm of ${maximum}`);
      if (bpm <= maximum) assert.ok(zones.bounds[expected]!.min <= bpm && bpm <= zones.bounds[expected]!.max, `${bpm} bpm within its zone's bounds`);
    }
  }
});

it('counts active zone minutes once for fat burn and twice for cardio and peak', () => {
  assert.equal(activeZoneMinutesOf([600, 0, 0, 0]), 0);
  assert.equal(activeZoneMinutesOf([600, 30, 0, 0]), 30);
  assert.equal(activeZoneMinutesOf([600, 30, 20, 5]), 30 + 40 + 10);
});
