/**
 * Fitbit's dates and periods: a date is `today` or `YYYY-MM-DD`, a local date in the person's zone;
 * a period ends on its date (`7d` is that date and the six before it; `1m` reaches back one calendar
 * month), and a range names its first and last date. Each resource has its own periods and longest
 * range, as Fitbit's.
 */
import { DateTime } from 'luxon';
import { isOn } from '../../speed-switches.js';
import { validation } from './errors.js';

export const PERIODS = ['1d', '7d', '30d', '1w', '1m', '3m', '6m', '1y'] as const;
export type Period = (typeof PERIODS)[number];

const PERIOD_START: Record<Period, (last: DateTime) => DateTime> = {
  '1d': (last) => last,
  '7d': (last) => last.minus({ days: 6 }),
  '30d': (last) => last.minus({ days: 29 }),
  '1w': (last) => last.minus({ days: 6 }),
  '1m': (last) => last.minus({ months: 1 }).plus({ days: 1 }),
  '3m': (last) => last.minus({ months: 3 }).plus({ days: 1 }),
  '6m': (last) => last.minus({ months: 6 }).plus({ days: 1 }),
  '1y': (last) => last.minus({ years: 1 }).plus({ days: 1 }),
};

export interface DateRules {
  /** The periods the resource takes. */
  periods: readonly Period[];
  /** The most dates a range of two dates may hold. */
  maxDays: number;
}

/** Local dates [first, last] in a zone, with the instants they cover: [from, to). */
export interface LocalDates {
  zone: string;
  dates: string[];
  from: number;
  to: number;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `today` or a date of the calendar, at the start of that day in `zone`. */
export function localDate(text: string, zone: string, now: number, fieldName = 'date'): DateTime {
  if (text === 'today') return DateTime.fromSeconds(now, { zone }).startOf('day');
  const date = ISO_DATE.test(text) ? DateTime.fromISO(text, { zone }) : null;
  if (!date?.isValid) throw validation(fieldName, `Invalid date: ${text.slice(0, 20)}. The date must be in the format yyyy-MM-dd or today.`);
  return date;
}

/** Most spans one keeper holds; then it starts afresh. */
const MAX_KEPT_SPANS = 256;

/**
 * datesOf with its answers kept, as the `/v1` routes keep their plans and date ranges: apps ask for
 * the same dates again and again ("the last 30 days"), and working them out with luxon costs more
 * than reading the data. `today` resolves per minute of the clock: a local date never changes
 * within one (every zone's midnight falls on a whole minute). A refused request is never kept.
 * Switch `fitbit-dates` (src/speed-switches.ts), needed by rows 16 and 17 of `npm run bench`; the
 * plain path is datesOf, and test/fuzz/speed-caches shows both give the same dates and refusals.
 */
export function keptDates(rules: DateRules): (first: string, second: string, zone: string, now: number) => LocalDates {
  if (!isOn('fitbit-dates')) {
    return function datesEachTime(first, second, zone, now) {
      return datesOf(first, second, zone, now, rules);
    };
  }
  const spans = new Map<string, LocalDates>();
  return (first, second, zone, now) => {
    const key = `${zone} ${first} ${second} ${first === 'today' || second === 'today' ? Math.floor(now / 60) : ''}`;
    let span = spans.get(key);
    if (span === undefined) {
      span = datesOf(first, second, zone, now, rules);
      if (spans.size >= MAX_KEPT_SPANS) spans.clear();
      spans.set(key, span);
    }
    return span;
  };
}

/** The dates of `{date}/{period}` or `{base-date}/{end-date}` (whichever `second` is). */
export function datesOf(first: string, second: string, zone: string, now: number, rules: DateRules): LocalDates {
  if ((PERIODS as readonly string[]).includes(second)) {
    const period = second as Period;
    if (!rules.periods.includes(period)) throw validation('period', `Invalid period: ${period}. It must be one of ${rules.periods.join(', ')}.`);
    const last = localDate(first, zone, now);
    return spanOf(PERIOD_START[period](last), last, zone);
  }
  if (!ISO_DATE.test(second) && second !== 'today') {
    throw validation('period', `Invalid period or end date: ${second.slice(0, 20)}. It must be one of ${rules.periods.join(', ')} or a date in the format yyyy-MM-dd.`);
  }
  const start = localDate(first, zone, now, 'base-date');
  const end = localDate(second, zone, now, 'end-date');
  if (end < start) throw validation('end-date', 'Invalid date range: the end date is before the base date.');
  const span = spanOf(start, end, zone);
  if (span.dates.length > rules.maxDays) throw validation('end-date', `Invalid date range: at most ${rules.maxDays} days.`);
  return span;
}

/** One local date as a span. */
export function dayOf(text: string, zone: string, now: number): LocalDates {
  const date = localDate(text, zone, now);
  return spanOf(date, date, zone);
}

function spanOf(first: DateTime, last: DateTime, zone: string): LocalDates {
  const dates: string[] = [];
  for (let day = first; day <= last; day = day.plus({ days: 1 })) dates.push(day.toISODate()!);
  // Local midnights; luxon puts a date's start where the clock jumps if midnight itself is skipped.
  return { zone, dates, from: first.toSeconds(), to: last.plus({ days: 1 }).startOf('day').toSeconds() };
}

/** `HH:mm` of a time window (`/time/08:00/09:30`), as minutes after local midnight. */
export function clockMinutes(text: string, fieldName: string): number {
  const match = /^(\d{2}):(\d{2})$/.exec(text);
  if (!match || Number(match[1]) > 23 || Number(match[2]) > 59) throw validation(fieldName, `Invalid time: ${text.slice(0, 10)}. The time must be in the format HH:mm.`);
  return Number(match[1]) * 60 + Number(match[2]);
}
