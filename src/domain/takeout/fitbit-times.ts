/**
 * The ways a Fitbit archive writes a time, all on the local clock without a zone
 * (calendar/local-clock.ts turns them into instants): `MM/DD/YY HH:MM:SS` (minute and heart-rate
 * lists), `YYYY-MM-DDTHH:MM:SS.sss` (sleep), `MM/DD/YY` with `HH:MM:SS` (weight). Two-digit years
 * are 2000–2099 (Fitbit's first tracker is from 2009). Parsed by hand: a year of heart rate is
 * millions of them.
 */
import { localSeconds, type LocalSeconds } from '../../calendar/local-clock.js';

const ZERO = 48;

/** The number of the digits of `text` from `at` to `at + count`, or -1 when one is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]!) return false;
  return month !== 2 || day < 29 || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
}

function validTime(hour: number, minute: number, second: number): boolean {
  return hour >= 0 && hour < 24 && minute >= 0 && minute < 60 && second >= 0 && second < 60;
}

function localOf(year: number, month: number, day: number, hour: number, minute: number, second: number): LocalSeconds | null {
  return validDate(year, month, day) && validTime(hour, minute, second) ? localSeconds(year, month, day, hour, minute, second) : null;
}

/** `MM/DD/YY HH:MM:SS`; null for anything else. */
export function parseListTime(text: unknown): LocalSeconds | null {
  if (typeof text !== 'string' || text.length !== 17) return null;
  if (text[2] !== '/' || text[5] !== '/' || text[8] !== ' ' || text[11] !== ':' || text[14] !== ':') return null;
  const month = digits(text, 0, 2);
  const day = digits(text, 3, 2);
  const year = digits(text, 6, 2);
  const hour = digits(text, 9, 2);
  const minute = digits(text, 12, 2);
  const second = digits(text, 15, 2);
  if (month < 0 || day < 0 || year < 0 || hour < 0 || minute < 0 || second < 0) return null;
  return localOf(2000 + year, month, day, hour, minute, second);
}

/** The local date (days since 1970-01-01) of a `MM/DD/YY…` or `MM/DD/YYYY` text, or null. */
export function parseListDate(text: unknown): number | null {
  if (typeof text !== 'string' || text.length < 8 || text[2] !== '/' || text[5] !== '/') return null;
  const month = digits(text, 0, 2);
  const day = digits(text, 3, 2);
  const fourDigits = text.length >= 10 && digits(text, 6, 4) >= 0 && (text.length === 10 || text[10] === ' ');
  const year = fourDigits ? digits(text, 6, 4) : 2000 + digits(text, 6, 2);
  if (month < 0 || day < 0 || year < 2000 || !validDate(year, month, day)) return null;
  return Date.UTC(year, month - 1, day) / 86_400_000;
}

/** `YYYY-MM-DDTHH:MM:SS` with optional fractions of a second (dropped); null for anything else. */
export function parseIsoLocalTime(text: unknown): LocalSeconds | null {
  if (typeof text !== 'string' || text.length < 19 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return null;
  if (text.length > 19 && !/^\.\d{1,9}$/.test(text.slice(19))) return null;
  const [year, month, day, hour, minute, second] = [digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2), digits(text, 11, 2), digits(text, 14, 2), digits(text, 17, 2)];
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  return localOf(year, month, day, hour, minute, second);
}

/** `MM/DD/YY` and `HH:MM:SS` (a weighing); null for anything else. */
export function parseDateAndTime(date: unknown, time: unknown): LocalSeconds | null {
  if (typeof date !== 'string' || typeof time !== 'string' || date.length !== 8) return null;
  return parseListTime(`${date} ${time}`);
}
