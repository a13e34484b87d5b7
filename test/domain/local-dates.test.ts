/**
 * Kept date ranges (domain/local-dates.ts): the same ranges parseDateRange works out, kept only
 * for explicit dates and by zone, and every refusal still made.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { keptDateRanges, parseDateRange, type DateRangeQuery } from '../../src/domain/local-dates.js';
import { ApiError } from '../../src/errors.js';

const RULES = { defaultDays: 1, maxDays: 366 };
const NOW = Date.UTC(2024, 9, 29, 12) / 1000;

it('gives the range parseDateRange gives, for each zone of the query or the profile', () => {
  const rangeOf = keptDateRanges(RULES);
  const queries: Array<[DateRangeQuery, string]> = [
    [{ start_date: '2024-10-26', end_date: '2024-10-28' }, 'Europe/Berlin'],
    [{ start_date: '2024-10-26', end_date: '2024-10-28' }, 'Asia/Kolkata'],
    [{ start_date: '2024-10-26', end_date: '2024-10-28', timezone: 'UTC' }, 'Europe/Berlin'],
    [{ start_date: '2024-10-26', end_date: '2024-10-28', timezone: 'america/new_york' }, 'UTC'],
    [{ start_date: '2024-03-31', end_date: '2024-03-31' }, 'Europe/Berlin'],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [query, zone] of queries) assert.deepEqual(rangeOf(query, zone, NOW), parseDateRange(query, zone, NOW, RULES), `${JSON.stringify(query)} ${zone}`);
  }
  // The same dates in another zone are other instants: the zone is part of what is kept.
  const berlin = rangeOf(queries[0]![0], 'Europe/Berlin', NOW);
  const kolkata = rangeOf(queries[0]![0], 'Asia/Kolkata', NOW);
  assert.equal(kolkata.from, berlin.from - 3.5 * 3600);
  assert.equal(rangeOf(queries[3]![0], 'UTC', NOW).timezone, 'America/New_York');
});

it('works out a range ending today by the clock each time', () => {
  const rangeOf = keptDateRanges(RULES);
  const today = rangeOf({}, 'UTC', NOW);
  assert.equal(today.from, Date.UTC(2024, 9, 29) / 1000);
  const tomorrow = rangeOf({}, 'UTC', NOW + 86_400);
  assert.equal(tomorrow.from, Date.UTC(2024, 9, 30) / 1000);
  assert.equal(rangeOf({ start_date: '2024-10-25' }, 'UTC', NOW + 86_400).to, Date.UTC(2024, 9, 31) / 1000);
});

it('refuses a bad query every time, after good ones were kept', () => {
  const rangeOf = keptDateRanges(RULES);
  rangeOf({ start_date: '2024-10-26', end_date: '2024-10-28' }, 'UTC', NOW);
  const refused: Array<[DateRangeQuery, RegExp]> = [
    [{ start_date: '2024-02-30', end_date: '2024-03-01' }, /start_date 2024-02-30 is not a date/],
    [{ start_date: '2024-10-28', end_date: '2024-10-26' }, /end_date 2024-10-26 is before start_date 2024-10-28/],
    [{ start_date: '2023-01-01', end_date: '2024-01-02' }, /holds 367 dates; at most 366/],
    [{ start_date: '2024-10-26', end_date: '2024-10-28', timezone: 'Mars/Olympus' }, /timezone must be an IANA time zone name/],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [query, message] of refused) {
      assert.throws(() => rangeOf(query, 'UTC', NOW), (error: unknown) => error instanceof ApiError && error.status === 400 && message.test(error.message), JSON.stringify(query));
    }
  }
});
