/**
 * Local times without a zone turned into instants (src/calendar/local-clock.ts): a repeated hour
 * read in order, a skipped hour naming nothing, zones east of UTC with half-hour offsets and
 * half-hour changes of clocks, checked against luxon.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DateTime } from 'luxon';
import { LocalClockReader, localSeconds } from '../../src/calendar/local-clock.js';

const local = (text: string) => {
  const [date, time] = text.split(' ');
  const [y, mo, d] = date!.split('-').map(Number);
  const [h, mi, s] = time!.split(':').map(Number);
  return localSeconds(y!, mo!, d!, h!, mi!, s!);
};
const utc = (iso: string) => Date.parse(iso) / 1000;

it('reads the hour repeated when clocks go back in order: first the summer one, then the winter one', () => {
  const clock = new LocalClockReader('Europe/Berlin');
  const read = ['2024-10-27 01:59:55', '2024-10-27 02:00:00', '2024-10-27 02:59:55', '2024-10-27 02:00:00', '2024-10-27 02:30:00', '2024-10-27 03:00:00'].map((text) => clock.at(local(text)));
  assert.deepEqual(read, [
    { utc: utc('2024-10-26T23:59:55Z') },
    { utc: utc('2024-10-27T00:00:00Z') },
    { utc: utc('2024-10-27T00:59:55Z') },
    { utc: utc('2024-10-27T01:00:00Z') },
    { utc: utc('2024-10-27T01:30:00Z') },
    { utc: utc('2024-10-27T02:00:00Z') },
  ]);
  // A new list starts over: its first 02:30 is the summer one again.
  clock.restart();
  assert.deepEqual(clock.at(local('2024-10-27 02:30:00')), { utc: utc('2024-10-27T00:30:00Z') });
});

it('names no instant for a time in the hour skipped when clocks go forward', () => {
  const clock = new LocalClockReader('Europe/Berlin');
  assert.deepEqual(clock.at(local('2024-03-31 01:59:00')), { utc: utc('2024-03-31T00:59:00Z') });
  assert.deepEqual(clock.at(local('2024-03-31 02:30:00')), { skipped: true });
  assert.deepEqual(clock.at(local('2024-03-31 03:00:00')), { utc: utc('2024-03-31T01:00:00Z') });
});

it('agrees with luxon every 7 minutes over two years in zones east and west of UTC, half-hour changes included', () => {
  for (const zone of ['Asia/Kolkata', 'Australia/Lord_Howe', 'America/New_York', 'Asia/Kathmandu', 'UTC']) {
    const clock = new LocalClockReader(zone);
    for (let t = utc('2023-06-01T00:00:00Z'); t < utc('2025-06-01T00:00:00Z'); t += 7 * 60) {
      const shown = DateTime.fromSeconds(t, { zone });
      const reading = localSeconds(shown.year, shown.month, shown.day, shown.hour, shown.minute, shown.second);
      const answer = clock.at(reading);
      assert.deepEqual(answer, { utc: t }, `${zone} ${shown.toISO()}`);
    }
  }
});
