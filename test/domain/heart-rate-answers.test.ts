import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planBuckets, type BucketPlan } from '../../src/calendar/step-buckets.js';
import { emptyHeartRateDay } from '../../src/db/codec/heart-rate-minutes.js';
import { packHeartRateDay } from '../../src/db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../../src/domain/resting-heart-rate.js';
import { answerKey, keptHeartRateAnswers } from '../../src/domain/heart-rate-answers.js';
import type { SeriesRequest } from '../../src/domain/step-series.js';
import type { HeartRateDayRow } from '../../src/store/heart-rate-series.js';

const DAY = 1_764_115_200;

/** A packed day as a reader returns it, every minute from `first` on at `bpm` (min bpm − 3, max bpm + 4). */
function dayRow(dayStart: number, bpm: number, first = 0): HeartRateDayRow {
  const day = emptyHeartRateDay();
  for (let m = first; m < 1440; m++) {
    day.avg[m] = bpm;
    day.min[m] = bpm - 3;
    day.max[m] = bpm + 4;
  }
  const { total, hours, minutes } = packHeartRateDay(day, lowestHalfHour);
  return { day_start: BigInt(dayStart), total, hours, minutes };
}

/** The same values in new objects and buffers, as the next read of unchanged days gives them. */
const reread = (rows: readonly HeartRateDayRow[]): HeartRateDayRow[] =>
  rows.map((row) => ({ day_start: row.day_start, total: row.total, hours: Buffer.from(row.hours), minutes: Buffer.from(row.minutes) }));

function flipped(bytes: Uint8Array, at: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at]! ^= 1;
  return copy;
}

const minuteRequest: SeriesRequest = { granularity: 'minute', timezone: 'UTC', start: DAY, end: DAY + 86_400 };
const planOf = (request: SeriesRequest): BucketPlan => planBuckets(request.timezone, request.granularity, request.start, request.end);

describe('kept heart-rate answers', () => {
  it('finds an answer only for the same user, query, plan and days, byte for byte', () => {
    const answers = keptHeartRateAnswers();
    const plan = planOf(minuteRequest);
    const rows = [dayRow(DAY, 70, 100)];
    const body = Buffer.from('the answer');
    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, rows), undefined, 'nothing kept yet');
    answers.keep(answerKey('u1', minuteRequest), plan, rows, body);

    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, reread(rows)), body, 'equal days read again');
    assert.equal(answers.find(answerKey('u1', { ...minuteRequest }), plan, rows), body, 'an equal query');

    const [row] = rows as [HeartRateDayRow];
    const changed: Array<[string, HeartRateDayRow[]]> = [
      ['a minute\'s byte', [{ ...row, minutes: flipped(row.minutes, row.minutes.length - 1) }]],
      ['a quarter hour\'s byte', [{ ...row, hours: flipped(row.hours, 0) }]],
      ['the total', [{ ...row, total: (row.total as bigint) + 1n }]],
      ['the day', [{ ...row, day_start: BigInt(DAY + 86_400) }]],
      ['a day more', [row, dayRow(DAY + 86_400, 70)]],
      ['no day', []],
      ['other heart rates', [dayRow(DAY, 71, 100)]],
    ];
    for (const [what, other] of changed) assert.equal(answers.find(answerKey('u1', minuteRequest), plan, other), undefined, what);

    assert.equal(answers.find(answerKey('u2', minuteRequest), plan, rows), undefined, 'another user with the same days');
    const berlin = { ...minuteRequest, timezone: 'Europe/Berlin' };
    assert.equal(answers.find(answerKey('u1', berlin), planOf(berlin), rows), undefined, 'another zone');
    const later = { ...minuteRequest, end: minuteRequest.end + 60 };
    assert.equal(answers.find(answerKey('u1', later), planOf(later), rows), undefined, 'another range');
    assert.equal(answers.find(answerKey('u1', minuteRequest), planOf(minuteRequest), rows), undefined, 'the plan made again (a kept plan dropped)');
    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, rows), body, 'still kept after all of these');
  });

  it('keeps the answer of the latest days of a query, replacing the one before', () => {
    const answers = keptHeartRateAnswers();
    const plan = planOf(minuteRequest);
    const before = [dayRow(DAY, 70)];
    const after = [dayRow(DAY, 80)];
    answers.keep(answerKey('u1', minuteRequest), plan, before, Buffer.from('before'));
    const size = answers.bytes;
    answers.keep(answerKey('u1', minuteRequest), plan, after, Buffer.from('after!'));
    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, before), undefined);
    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, after)?.toString(), 'after!');
    assert.equal(answers.bytes, size + (after[0]!.minutes.length - before[0]!.minutes.length) + (after[0]!.hours.length - before[0]!.hours.length));
  });

  it('keeps at most its bytes, the least recently found going first', () => {
    const rows = [dayRow(DAY, 70)];
    const plan = planOf(minuteRequest);
    const body = Buffer.alloc(10_000, 0x20);
    const one = keptHeartRateAnswers(Number.MAX_SAFE_INTEGER);
    one.keep(answerKey('u0', minuteRequest), plan, rows, body);
    const each = one.bytes;

    const answers = keptHeartRateAnswers(each * 3);
    answers.keep(answerKey('u1', minuteRequest), plan, rows, body);
    answers.keep(answerKey('u2', minuteRequest), plan, rows, body);
    answers.keep(answerKey('u3', minuteRequest), plan, rows, body);
    assert.equal(answers.bytes, each * 3);
    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, rows), body, 'u1 found: u2 is now the least recent');
    answers.keep(answerKey('u4', minuteRequest), plan, rows, body);
    assert.equal(answers.bytes, each * 3);
    assert.equal(answers.find(answerKey('u2', minuteRequest), plan, rows), undefined);
    for (const user of ['u1', 'u3', 'u4']) assert.equal(answers.find(answerKey(user, minuteRequest), plan, rows), body, user);

    // An answer larger than the whole budget is not kept, and drops the query's older answer.
    answers.keep(answerKey('u1', minuteRequest), plan, rows, Buffer.alloc(each * 3));
    assert.equal(answers.find(answerKey('u1', minuteRequest), plan, rows), undefined);
    assert.equal(answers.bytes, each * 2);
  });
});
