/**
 * The ranges of local dates a query names (domain/local-dates.ts parseDateRange): in the query's
 * zone or the profile's, a range ending today following the clock, and every bad query refused.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseDateRange, type DateRangeQuery } from '../../src/domain/local-dates.js';
import { ApiError } from '../../src/errors.js';

const RULES = { defaultDays: 1, maxDays: 366 };
const NOW = Date.UTC(2024, 9, 29, 12) / 1000;
const rangeOf = (query: DateRangeQuery, personZone: string, now = NOW) => parseDateRange(query, personZone, now, RULES);

it('works out the local midnights of the dates in the query\'s zone, else the profile\'s', () => {
  const dates = { start_date: '2024-10-26', end_date: '2024-10-28' };
  const berlin = rangeOf(dates, 'Europe/Berlin');
  // 27 October 2024 is 25 hours long in Berlin (clocks go back): 73 hours from the 26th to the 29th.
  assert.deepEqual(berlin, { timezone: 'Europe/Berlin', from: Date.UTC(2024, 9, 25, 22) / 1000, to: Date.UTC(2024, 9, 28, 23) / 1000 });
  // The same dates in another zone are other instants.
  assert.equal(rangeOf(dates, 'Asia/Kolkata').from, Date.UTC(2024, 9, 25, 18, 30) / 1000);
  assert.equal(rangeOf({ ...dates, timezone: 'UTC' }, 'Europe/Berlin').from, Date.UTC(2024, 9, 26) / 1000);
  assert.equal(rangeOf({ ...dates, timezone: 'america/new_york' }, 'UTC').timezone, 'America/New_York');
  // 31 March 2024 is 23 hours long in Berlin.
  const short = rangeOf({ start_date: '2024-03-31', end_date: '2024-03-31' }, 'Europe/Berlin');
  assert.equal(short.to - short.from, 23 * 3600);
});

it('works out a range ending today by the clock', () => {
  assert.equal(rangeOf({}, 'UTC').from, Date.UTC(2024, 9, 29) / 1000);
  assert.equal(rangeOf({}, 'UTC', NOW + 86_400).from, Date.UTC(2024, 9, 30) / 1000);
  assert.equal(rangeOf({ start_date: '2024-10-25' }, 'UTC', NOW + 86_400).to, Date.UTC(2024, 9, 31) / 1000);
});

it('refuses a date that is not one, a range backwards or too long, and a zone that does not exist', () => {
  const refused: Array<[DateRangeQuery, RegExp]> = [
    [{ start_date: '2024-02-30', end_date: '2024-03-01' }, /start_date 2024-02-30 is not a date/],
    [{ start_date: '2024-10-28', end_date: '2024-10-26' }, /end_date 2024-10-26 is before start_date 2024-10-28/],
    [{ start_date: '2023-01-01', end_date: '2024-01-02' }, /holds 367 dates; at most 366/],
    [{ start_date: '2024-10-26', end_date: '2024-10-28', timezone: 'Mars/Olympus' }, /timezone must be an IANA time zone name/],
  ];
  for (const [query, message] of refused) {
    assert.throws(() => rangeOf(query, 'UTC'), (error: unknown) => error instanceof ApiError && error.status === 400 && message.test(error.message), JSON.stringify(query));
  }
});
