import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnsFromJson, timeColumnOf } from '../../../src/store/sqlite/step-series.js';

describe('series rows sent by SQLite as one JSON text of columns', () => {
  it('read back column by column, instants made absolute from the series start', () => {
    assert.deepEqual(columnsFromJson('[[0,86400],[0,12345]]', timeColumnOf(['t', 'value']), 1795219200), [[1795219200, 1795305600], [0, 12345]]);
    assert.deepEqual(columnsFromJson('[[0,2],[-172800,86400],[7,-3]]', timeColumnOf(['span', 'unit_start', 'steps']), 1_000_000), [[0, 2], [827200, 1086400], [7, -3]]);
    assert.deepEqual(columnsFromJson('[[900],[-900],[5]]', timeColumnOf(['width', 't', 'value']), 253402300799), [[900], [253402299899], [5]]);
  });

  it('read no rows from empty columns (a series without stored steps)', () => {
    assert.deepEqual(columnsFromJson('[[],[]]', timeColumnOf(['t', 'value']), 1795219200), [[], []]);
  });

  it('refuses a query whose columns hold no instant, or two', () => {
    assert.throws(() => timeColumnOf(['width', 'value']), /exactly one time column/);
    assert.throws(() => timeColumnOf(['t', 'unit_start']), /exactly one time column/);
  });
});
