import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { integersOf } from '../../src/store/step-series.js';

describe('series rows sent by SQLite as one text', () => {
  it('read back as rows of integers, negative ones included', () => {
    assert.deepEqual(integersOf('1795219200,0,1795305600,12345', 2), [[1795219200, 0], [1795305600, 12345]]);
    assert.deepEqual(integersOf('0,-172800,7,2,86400,-3', 3), [[0, -172800, 7], [2, 86400, -3]]);
    assert.deepEqual(integersOf('253402300799,9007199254740991', 2), [[253402300799, 9007199254740991]]);
  });

  it('read no rows from no text (a series without stored steps)', () => {
    assert.deepEqual(integersOf(null, 2), []);
  });
});
