import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement } from '../../../bench/lib/loads.js';
import { formatCpuTable, ratioCheck, type Row } from '../../../bench/lib/report.js';

function row(server: string, cpu: Measurement['cpu']): Row {
  const measurement: Measurement = { rate: 1, p50: 1, p99: 1, ok: 1, failed: 0, seconds: 1, rssMb: null, cpu };
  return { load: '4 flows', server, unit: 'flow/s', measurement, ratios: {}, checks: [] };
}

describe('CPU table', () => {
  it('shows each part of an operation in µs, in ms from 1 ms, and a dash where there is no server', () => {
    const lines = formatCpuTable([
      row('Stride', { serverLoopUs: 2_987.4, serverThreadsUs: 9_412, driverUs: 12.4 }),
      row('hashing', { serverLoopUs: null, serverThreadsUs: null, driverUs: 9_604 }),
    ]).split('\n');
    assert.deepEqual(lines[0]!.split(/\s{2,}/), ['load', 'server', 'event loop', 'other threads', 'load driver']);
    assert.deepEqual(lines[2]!.trim().split(/\s{2,}/), ['4 flows', 'Stride', '2.99 ms', '9.41 ms', '12 µs']);
    assert.deepEqual(lines[3]!.trim().split(/\s{2,}/), ['4 flows', 'hashing', '—', '—', '9.60 ms']);
  });
});

describe('ratio checks', () => {
  it('never shows a ratio just below its target as the target', () => {
    assert.deepEqual(ratioCheck('vs bound', 0.6997, 0.7), { target: 'vs bound ≥ 0.7×', pass: false, actual: '0.69×' });
    assert.deepEqual(ratioCheck('vs bound', 0.7, 0.7), { target: 'vs bound ≥ 0.7×', pass: true, actual: '0.70×' });
    assert.equal(ratioCheck('vs bare', 0.29, 0.3).actual, '0.29×', 'no float artefact cuts 0.29 to 0.28');
    assert.equal(ratioCheck('vs peer', 2.256, 2).actual, '2.25×');
  });
});
