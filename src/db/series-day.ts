/**
 * The packed form of one person × metric × UTC day in `series_days` (docs/decisions/0013-series-store.md):
 * the day's 1440 minutes, each absent or holding a non-negative integer, and beside them the
 * day's total and its 24 hourly sums, so that reads whose buckets do not cut through an hour never
 * unpack the minutes.
 *
 * `minutes`: alternating unsigned LEB128 varints — empty minutes skipped, minutes present, then the
 * values of those present minutes — until the day is covered. A day of minute steps (values mostly
 * under 128) is about 1,560 bytes, a day with a few hours of data proportionally less. node:zlib
 * was measured on it and left out for now (docs/performance.md, November 26): deflate took a
 * bench day from 1,559 to 1,070 bytes, but an inflate costs 39 µs against 21 µs for unpacking,
 * paid by every read that cuts through an hour, and steps alone are well under the size target.
 * `hours`: the 24 hourly sums as varints (empty hours are a zero byte).
 */

export const MINUTES_PER_DAY = 1440;
export const DAY_SECONDS = 86_400;

/** Absent minutes in an unpacked day. */
export const ABSENT = -1;

/** A day unpacked: `values[m]` is minute m's value, or ABSENT. */
export type DayMinutes = Int32Array;

export function emptyDay(): DayMinutes {
  return new Int32Array(MINUTES_PER_DAY).fill(ABSENT);
}

/** The UTC day holding instant `t` (seconds). */
export function dayStartOf(t: number): number {
  return t - (((t % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
}

class Writer {
  private bytes = new Uint8Array(256);
  private length = 0;

  varint(value: number): void {
    if (this.length + 8 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    let v = value;
    while (v >= 0x80) {
      this.bytes[this.length++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.bytes[this.length++] = v;
  }

  done(): Buffer {
    return Buffer.from(this.bytes.subarray(0, this.length));
  }
}

/** Reads varints from `bytes`, starting at 0. */
class Reader {
  position = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get more(): boolean {
    return this.position < this.bytes.length;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.bytes[this.position++];
      if (byte === undefined) throw new Error('a packed series day ends inside a number');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  }
}

export function packMinutes(day: DayMinutes): Buffer {
  const out = new Writer();
  let m = 0;
  while (m < MINUTES_PER_DAY) {
    const runStart = m;
    while (m < MINUTES_PER_DAY && day[m] === ABSENT) m++;
    if (m === MINUTES_PER_DAY) break;
    const present = m;
    while (m < MINUTES_PER_DAY && day[m] !== ABSENT) m++;
    out.varint(present - runStart);
    out.varint(m - present);
    for (let i = present; i < m; i++) out.varint(day[i]!);
  }
  return out.done();
}

export function unpackMinutes(bytes: Uint8Array): DayMinutes {
  const day = emptyDay();
  const input = new Reader(bytes);
  let m = 0;
  while (input.more) {
    m += input.varint();
    const count = input.varint();
    if (m + count > MINUTES_PER_DAY) throw new Error('a packed series day holds more than 1440 minutes');
    for (let i = 0; i < count; i++) day[m++] = input.varint();
  }
  return day;
}

/** The day's 24 hourly sums (absent minutes add nothing). */
export function hourSums(day: DayMinutes): number[] {
  const hours = new Array<number>(24).fill(0);
  for (let m = 0; m < MINUTES_PER_DAY; m++) {
    const value = day[m]!;
    if (value !== ABSENT) hours[(m / 60) | 0]! += value;
  }
  return hours;
}

export function packHours(hours: readonly number[]): Buffer {
  const out = new Writer();
  for (const sum of hours) out.varint(sum);
  return out.done();
}

export function unpackHours(bytes: Uint8Array): number[] {
  const input = new Reader(bytes);
  return Array.from({ length: 24 }, () => input.varint());
}

/** A day's row values (beside user, metric and day start) from its minutes. */
export interface PackedDay {
  total: number;
  hours: Buffer;
  minutes: Buffer;
}

export function packDay(day: DayMinutes): PackedDay {
  const hours = hourSums(day);
  return { total: hours.reduce((a, b) => a + b, 0), hours: packHours(hours), minutes: packMinutes(day) };
}
