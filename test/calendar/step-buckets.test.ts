import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planBuckets, startOfLocalDay } from '../../src/calendar/step-buckets.js';

const utc = (year: number, month: number, day: number, hour = 0, minute = 0) => Date.UTC(year, month - 1, day, hour, minute) / 1000;
const HOUR = 3600;

describe('local-clock buckets', () => {
  it('widens a range to whole buckets and keeps an empty range empty', () => {
    const plan = planBuckets('UTC', 'hour', utc(2024, 1, 1, 5, 10), utc(2024, 1, 1, 7, 1));
    assert.deepEqual(plan.boundaries, [5, 6, 7, 8].map((h) => utc(2024, 1, 1, h)));
    assert.deepEqual(planBuckets('UTC', 'day', 1000, 1000).boundaries, []);
  });

  it('starts a day whose midnight is skipped when the clock jumps (America/Havana, 2024-03-10)', () => {
    // Cuba springs forward at 00:00 local: the day begins at 01:00 CDT = 05:00Z and lasts 23 h.
    const plan = planBuckets('America/Havana', 'day', utc(2024, 3, 10, 12), utc(2024, 3, 10, 13));
    assert.deepEqual(plan.boundaries, [utc(2024, 3, 10, 5), utc(2024, 3, 11, 4)]);
  });

  it('handles a 30-minute DST change (Australia/Lord_Howe)', () => {
    // 2024-04-07 02:00 +11 becomes 01:30 +10:30; the day is 24.5 hours long.
    const plan = planBuckets('Australia/Lord_Howe', 'day', utc(2024, 4, 6, 14), utc(2024, 4, 6, 15));
    assert.equal(plan.boundaries[1]! - plan.boundaries[0]!, 24.5 * HOUR);
  });

  it('skips the day Samoa never had (Pacific/Apia, 2011-12-30)', () => {
    // 29 December began at 00:00 -10 (10:00Z); at its end the clock jumped to 31 December 00:00 +14,
    // and 31 December, then 1 January, began at 10:00Z too: three buckets of 24 hours.
    const plan = planBuckets('Pacific/Apia', 'day', utc(2011, 12, 29, 12), utc(2011, 12, 31, 12));
    assert.deepEqual(plan.boundaries, [utc(2011, 12, 29, 10), utc(2011, 12, 30, 10), utc(2011, 12, 31, 10), utc(2012, 1, 1, 10)]);
    const lengths = plan.boundaries.slice(1).map((b, i) => b - plan.boundaries[i]!);
    assert.deepEqual(lengths, [24 * HOUR, 24 * HOUR, 24 * HOUR], 'no bucket for 30 December, no 48-hour bucket');
  });

  it('finds the start of the local day', () => {
    assert.equal(startOfLocalDay('Asia/Kolkata', utc(2024, 6, 15, 12)), utc(2024, 6, 14, 18, 30));
    assert.equal(startOfLocalDay('America/New_York', utc(2024, 11, 3, 4)), utc(2024, 11, 3, 4));
    assert.equal(startOfLocalDay('America/New_York', utc(2024, 11, 3, 3, 59)), utc(2024, 11, 2, 4));
  });

  it('gives 1095 day buckets for a 1095-day range at a local midnight', () => {
    const start = startOfLocalDay('Europe/Berlin', utc(2022, 1, 1, 12));
    assert.equal(planBuckets('Europe/Berlin', 'day', start, start + 1095 * 86_400).boundaries.length, 1096);
  });
});
