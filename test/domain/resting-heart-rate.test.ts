/** The resting heart rate (domain/resting-heart-rate.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { lowestHalfHour } from '../../src/domain/resting-heart-rate.js';

it('finds the lowest half hour of two quarter hours with at least 20 minutes of data', () => {
  assert.equal(lowestHalfHour([15, 15, 15], [15 * 70, 15 * 60, 15 * 80]), 65);
  assert.equal(lowestHalfHour([10, 9, 15], [10 * 40, 9 * 40, 15 * 90]), (9 * 40 + 15 * 90) / 24, 'a half hour of 19 minutes does not count');
  assert.equal(lowestHalfHour([15, 5, 0], [15 * 50, 5 * 50, 0]), 50);
  assert.equal(lowestHalfHour([15, 4, 0], [15 * 50, 4 * 50, 0]), null);
  assert.equal(lowestHalfHour([15, 15, 15, 15], [15 * 50, 15 * 50, 15 * 90, 15 * 90], 1, 3), 70, 'only quarters inside [from, to)');
});
