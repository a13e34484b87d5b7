/**
 * What a data event says changed (src/store/dated-ranges.ts): a range per date, and two changes
 * joined per date — as a waiting message is joined by an upload, or an import's notes by a write —
 * while a change of the older shape (a range per run of minutes) is joined as before.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { joinChanges, rangesByDate } from '../../src/store/dated-ranges.js';

const range = (start_time: number, end_time: number) => ({ start_time, end_time });

it('makes one range per date from the earliest start to the latest end of its spans, dates ascending', () => {
  assert.deepEqual(
    rangesByDate([
      { date: '2026-03-02', start_time: 500, end_time: 560 },
      { date: '2026-03-01', start_time: 100, end_time: 160 },
      { date: '2026-03-02', start_time: 300, end_time: 360 },
      { date: '2026-03-01', start_time: 220, end_time: 280 },
    ]),
    { dates: ['2026-03-01', '2026-03-02'], ranges: [range(100, 280), range(300, 560)] },
  );
  assert.deepEqual(rangesByDate([]), { dates: [], ranges: [] });
});

it('joins two changes per date: a date of both gets the range covering both, the others keep theirs', () => {
  const first = { dates: ['2026-03-01', '2026-03-02'], ranges: [range(100, 200), range(1000, 1100)] };
  const second = { dates: ['2026-03-02', '2026-03-03'], ranges: [range(900, 960), range(2000, 2060)] };
  assert.deepEqual(joinChanges(first, second), { dates: ['2026-03-01', '2026-03-02', '2026-03-03'], ranges: [range(100, 200), range(900, 1100), range(2000, 2060)] });
  assert.deepEqual(joinChanges(second, first), joinChanges(first, second), 'in either order');
  assert.deepEqual(joinChanges(undefined, first), first);
  assert.deepEqual(joinChanges({ dates: ['2026-03-02'] }, { dates: ['2026-03-01'] }), { dates: ['2026-03-01', '2026-03-02'] }, 'a weighing names dates only');
});

it('joins a change of the older shape, a range per run of minutes, as such changes were joined', () => {
  const older = { dates: ['2026-03-01'], ranges: [range(100, 160), range(220, 280), range(400, 460)] };
  const newer = { dates: ['2026-03-01'], ranges: [range(280, 340)] };
  assert.deepEqual(joinChanges(older, newer), { dates: ['2026-03-01'], ranges: [range(100, 160), range(220, 340), range(400, 460)] });
});
