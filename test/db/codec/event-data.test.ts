/**
 * The data of a row of events (src/db/codec/event-data.ts) and how a row names its types and its
 * person (src/db/event-rows.ts): every event reads back as the JSON it was, key order included;
 * what the packed formats cannot say exactly is kept as JSON; the bytes written today are held
 * fixed, since rows keep them for as long as events are kept.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { decodeEventData, encodeEventData, encodeLegacyEvent, JSON_DATA } from '../../../src/db/codec/event-data.js';
import { maskOf, storedUserId, typesOf, userIdOfStored } from '../../../src/db/event-rows.js';

const BERLIN_DST = { ranges: [{ start_time: 1774742580, end_time: 1774821600 }, { start_time: 1774821600, end_time: 1774828680 }], dates: ['2026-03-29', '2026-03-30'] };
/** A night in Kolkata: the range starts the evening before its date, in UTC the day before that. */
const NIGHT = { dates: ['2026-03-30'], ranges: [{ start_time: Date.UTC(2026, 2, 29, 16, 30) / 1000, end_time: Date.UTC(2026, 2, 30, 1, 0) / 1000 }] };

const roundTrip = (events: Array<Record<string, unknown>>, userId = 'u') =>
  decodeEventData(encodeEventData(events), events.length, userId).map((event) => JSON.stringify(event.data));
const told = (events: Array<Record<string, unknown>>, userId = 'u') => events.map((data) => JSON.stringify({ user_id: userId, ...data }));

it('reads every shape back as the very JSON apps were told, user_id first', () => {
  const shapes: Array<Record<string, unknown>> = [
    BERLIN_DST,
    NIGHT,
    { dates: ['2026-11-01'] },
    { ranges: [], dates: [] },
    { fields: ['display_name', 'timezone'], note: 'Zoë ✓ 🏃' },
    { scopes: ['read_activity'] },
    { reason: 'account_deleted' },
    { ranges: [{ start_time: 0, end_time: 86_400 }], start_date: '1970-01-01', end_date: '1970-01-01', cause: 'stride_length' },
  ];
  for (const shape of shapes) assert.deepEqual(roundTrip([shape]), told([shape]), JSON.stringify(shape));
  assert.deepEqual(roundTrip(shapes), told(shapes), 'all in one row');
});

it('packs a data event in a few bytes, and the same change of the next type in one', () => {
  assert.equal(JSON.stringify(BERLIN_DST).length, 144);
  assert.equal(encodeEventData([BERLIN_DST]).length, 15);
  assert.equal(encodeEventData([BERLIN_DST, BERLIN_DST]).length, 16);
  assert.equal(encodeEventData([NIGHT]).length, 11);
  assert.equal(encodeEventData([{ dates: ['2026-11-01'] }]).length, 5);
});

it('keeps as JSON what the packed formats would not read back exactly', () => {
  const kept: Array<Record<string, unknown>> = [
    { ranges: [{ start_time: 1, end_time: 61 }, { start_time: 121, end_time: 181 }], dates: ['1970-01-01'] },
    { dates: ['2026-03-30', '2026-03-29'] },
    { dates: ['1969-12-31'] },
    { dates: ['2026-02-30'] },
    { dates: ['2026-3-30'] },
    { ranges: [{ start_time: 1.5, end_time: 61 }], dates: ['1970-01-01'] },
    { ranges: [{ end_time: 61, start_time: 1 }], dates: ['1970-01-01'] },
    { ranges: [{ start_time: 61, end_time: 1 }], dates: ['1970-01-01'] },
    { ranges: [{ start_time: 1, end_time: 61, extra: true }], dates: ['1970-01-01'] },
    { dates: ['2026-03-30'], user_id: 'someone else' },
    { dates: [20260330] },
  ];
  for (const data of kept) {
    const bytes = encodeEventData([data]);
    assert.equal(bytes[0], JSON_DATA, JSON.stringify(data));
    assert.deepEqual(roundTrip([data]), told([data]), JSON.stringify(data));
  }
});

it('reads a row kept from before migration 022 as it was stored, with its own id', () => {
  const json = JSON.stringify({ user_id: 'ann', ranges: [{ start_time: 1, end_time: 2 }], dates: ['1970-01-01'] });
  const [event, ...more] = decodeEventData(encodeLegacyEvent('evt_0123456789abcdef0123456789abcdef', json), 1, 'ignored');
  assert.equal(more.length, 0);
  assert.equal(event!.legacyId, 'evt_0123456789abcdef0123456789abcdef');
  assert.equal(JSON.stringify(event!.data), json);
});

it('refuses bytes that do not hold as many events as the row has types', () => {
  assert.throws(() => decodeEventData(encodeEventData([BERLIN_DST]), 2, 'u'), /holds 1 events for 2 types/);
  assert.throws(() => decodeEventData(Uint8Array.of(2), 1, 'u'), /begins with a repeat/);
  assert.throws(() => decodeEventData(Uint8Array.of(9), 1, 'u'), /unknown format 9/);
  assert.throws(() => decodeEventData(Uint8Array.of(1, 40, 123), 1, 'u'), /ends inside its JSON/);
});

it('writes the bytes it wrote when rows were first written this way', () => {
  // Rows keep these for EVENT_RETENTION: a change of the encoder must still read them.
  assert.equal(encodeEventData([BERLIN_DST, BERLIN_DST]).toString('hex'), '0302bda001e802ace90401bf70a83702');
  assert.equal(encodeEventData([NIGHT]).toString('hex'), '0401bea001efa50388ef01');
  assert.equal(encodeEventData([{ scopes: ['a'] }]).toString('hex'), `0110${Buffer.from('{"scopes":["a"]}').toString('hex')}`);
});

it('names the types of a row by their bits, in the order of the bits, and a person by the bytes of their UUID', () => {
  assert.equal(maskOf(['steps.updated', 'distance.updated']), 0b11);
  assert.deepEqual(typesOf(0b11), ['steps.updated', 'distance.updated']);
  assert.deepEqual(typesOf(1 << 8), ['grant.revoked']);
  assert.throws(() => typesOf(0), /names no event type/);
  assert.throws(() => typesOf(1 << 12), /unknown/);
  assert.throws(() => maskOf(['webhook.test']), /not an event type/);
  const id = randomUUID();
  assert.equal(storedUserId(id).length, 16);
  assert.equal(userIdOfStored(storedUserId(id)), id);
  for (const other of ['ann', 'u1', 'ABCDEFAB-0000-4000-8000-000000000000', 'sixteen-chars-id', '']) {
    assert.equal(storedUserId(other)[0], 0xff, other);
    assert.equal(userIdOfStored(storedUserId(other)), other, other);
  }
});
