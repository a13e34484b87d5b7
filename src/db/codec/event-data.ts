/**
 * The `data` of a row of `events` (db/event-rows.ts): one entry per event of the row, in the order
 * of its types' bits, each a format byte and its body. The person's id is not repeated: the row
 * holds it (`user_id`), and it is put back as the first key when the event is read, where every
 * event has it. A data event's dates and ranges (store/dated-ranges.ts) take a few bytes of
 * numbers; anything else is its JSON. An entry is written in a packed format only when it reads
 * back as the very JSON it stands for (key order included), so nothing an app reads changes.
 *
 * A day's steps upload: `{"ranges": [two], "dates": [two]}` for steps.updated (about 140 bytes of
 * JSON) is 15 bytes here, and distance.updated with the same change 1 byte more.
 */
import { VarintReader, VarintWriter, unzigzag, zigzag } from './varint.js';

/**
 * Rows written before this encoding (migration 022): the event's own id (u16 length, UTF-8), then
 * its JSON as stored then, `user_id` included, to the end of the bytes. One entry, alone.
 */
export const LEGACY = 0;
/** JSON of the data without `user_id`: varint length, UTF-8. */
export const JSON_DATA = 1;
/** The same data as the entry before (`distance.updated` of a steps upload). */
export const SAME = 2;
/** `{ranges, dates}`, a range per date (the minute series). */
export const RANGES_DATES = 3;
/** `{dates, ranges}`, a range per date (sleep). */
export const DATES_RANGES = 4;
/** `{dates}` (body). */
export const DATES = 5;

export type EventData = Record<string, unknown>;

/** An event as read from its row: its data with `user_id` first, and a row of before 022 its own id. */
export interface ReadEvent {
  data: EventData;
  legacyId: string | null;
}

const DAY = 86_400;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a `YYYY-MM-DD`, or undefined for anything else. */
function dayNumber(date: unknown): number | undefined {
  if (typeof date !== 'string') return undefined;
  const match = DATE.exec(date);
  if (!match) return undefined;
  const day = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / 1000 / DAY;
  return Number.isInteger(day) && day >= 0 ? day : undefined;
}

const dateOf = (day: number) => new Date(day * DAY * 1000).toISOString().slice(0, 10);

interface Range {
  start_time: number;
  end_time: number;
}

/** The packed format of `data`'s shape, if it has one of them. */
function packedFormat(data: EventData): number | undefined {
  const keys = Object.keys(data).join(',');
  if (keys === 'ranges,dates') return RANGES_DATES;
  if (keys === 'dates,ranges') return DATES_RANGES;
  if (keys === 'dates') return DATES;
  return undefined;
}

/**
 * Dates ascending (by days since 1970: the first, then the steps), and per date its range as the
 * start's offset from the date's UTC midnight (zigzag: a local date's range may start the UTC day
 * before) and its length. Undefined where the numbers do not fit (the JSON is kept instead).
 */
function writePacked(out: VarintWriter, format: number, data: EventData): boolean {
  const dates = data.dates as unknown[];
  if (!Array.isArray(dates)) return false;
  const ranges = format === DATES ? [] : (data.ranges as Range[]);
  if (format !== DATES && (!Array.isArray(ranges) || ranges.length !== dates.length)) return false;
  out.varint(dates.length);
  let previous = 0;
  for (const [i, date] of dates.entries()) {
    const day = dayNumber(date);
    if (day === undefined || day < previous) return false;
    out.varint(day - previous);
    previous = day;
    if (format === DATES) continue;
    const range = ranges[i]!;
    const offset = range.start_time - day * DAY;
    const length = range.end_time - range.start_time;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || length < 0) return false;
    out.varint(zigzag(offset));
    out.varint(length);
  }
  return true;
}

function readPacked(reader: VarintReader, format: number): EventData {
  const count = reader.varint();
  const dates: string[] = [];
  const ranges: Range[] = [];
  let day = 0;
  for (let i = 0; i < count; i++) {
    day += reader.varint();
    dates.push(dateOf(day));
    if (format === DATES) continue;
    const start_time = day * DAY + unzigzag(reader.varint());
    ranges.push({ start_time, end_time: start_time + reader.varint() });
  }
  if (format === RANGES_DATES) return { ranges, dates };
  if (format === DATES_RANGES) return { dates, ranges };
  return { dates };
}

/** Packed if it reads back as the same JSON; undefined otherwise. */
function packed(data: EventData, json: string): Uint8Array | undefined {
  const format = packedFormat(data);
  if (format === undefined) return undefined;
  const out = new VarintWriter(32);
  out.varint(format);
  if (!writePacked(out, format, data)) return undefined;
  const bytes = out.done();
  const back = readPacked(new VarintReader(bytes, 'an event', 1), format);
  return JSON.stringify(back) === json ? bytes : undefined;
}

/** The entries of a row's events, each event's data without `user_id`, in the row's order. */
export function encodeEventData(events: readonly EventData[]): Buffer {
  const parts: Uint8Array[] = [];
  let previous: string | undefined;
  for (const data of events) {
    const json = JSON.stringify(data);
    if (json === previous) {
      parts.push(Uint8Array.of(SAME));
      continue;
    }
    previous = json;
    const compact = packed(data, json);
    if (compact) {
      parts.push(compact);
      continue;
    }
    const text = Buffer.from(json, 'utf8');
    const head = new VarintWriter(8);
    head.varint(JSON_DATA);
    head.varint(text.length);
    parts.push(head.done(), text);
  }
  return Buffer.concat(parts);
}

/** A row of before 022: its event's id and JSON (`user_id` included) as stored then. */
export function encodeLegacyEvent(id: string, json: string): Buffer {
  const idBytes = Buffer.from(id, 'utf8');
  const head = Buffer.alloc(3);
  head[0] = LEGACY;
  head.writeUInt16BE(idBytes.length, 1);
  return Buffer.concat([head, idBytes, Buffer.from(json, 'utf8')]);
}

/**
 * The events of a row's `data`, `count` of them (the row's types), each with `user_id` put back
 * first (null: a row of before 022 whose person was not stored; its JSON has what it had).
 */
export function decodeEventData(bytes: Uint8Array, count: number, userId: string | null): ReadEvent[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer[0] === LEGACY) {
    if (count !== 1) throw new Error(`an event row of before migration 022 holds one event, not ${count}`);
    const length = buffer.readUInt16BE(1);
    const legacyId = buffer.subarray(3, 3 + length).toString('utf8');
    return [{ legacyId, data: JSON.parse(buffer.subarray(3 + length).toString('utf8')) as EventData }];
  }
  const reader = new VarintReader(buffer, 'an event');
  const read: EventData[] = [];
  while (reader.more) {
    const format = reader.varint();
    if (format === SAME) {
      if (read.length === 0) throw new Error('an event row begins with a repeat');
      read.push(read[read.length - 1]!);
    } else if (format === JSON_DATA) {
      const length = reader.varint();
      const start = reader.position;
      reader.position += length;
      if (reader.position > buffer.length) throw new Error('an event ends inside its JSON');
      read.push(JSON.parse(buffer.subarray(start, reader.position).toString('utf8')) as EventData);
    } else if (format === RANGES_DATES || format === DATES_RANGES || format === DATES) {
      read.push(readPacked(reader, format));
    } else {
      throw new Error(`an event has the unknown format ${format}`);
    }
  }
  if (read.length !== count) throw new Error(`an event row holds ${read.length} events for ${count} types`);
  return read.map((data) => ({ legacyId: null, data: { user_id: userId, ...data } }));
}
