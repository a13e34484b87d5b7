/**
 * Ranges of local dates, as sleep and body weight are read (docs/api.md): `start_date` and
 * `end_date`, inclusive, in the profile's zone or the one `timezone` names. The route's schema
 * decides each parameter's shape; what it cannot say — that a date exists, the order of the two,
 * the length of the range, that a zone is known — is checked here.
 */
import { DateTime } from 'luxon';
import { invalidRequest } from '../errors.js';
import { canonicalTimeZone } from './profile-time-zone.js';
import { rangesByDate, type DatedSpan, type MinuteRange } from '../store/dated-ranges.js';
import type { DataChange } from '../store/sleep.js';

/** `GET ?start_date&end_date&timezone` (parseDateRange checks what the schema cannot). */
export const DATE_RANGE_QUERY_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start_date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD, the first local date (inclusive)' },
    end_date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD, the last local date (inclusive); default: today' },
    timezone: { type: 'string', maxLength: 64, description: 'an IANA time zone name; default: the profile\'s' },
  },
} as const;

export interface DateRangeQuery {
  start_date?: string;
  end_date?: string;
  timezone?: string;
}

export interface DateRangeRules {
  /** Dates in the range when start_date is not given (ending with end_date). */
  defaultDays: number;
  /** The most dates a range may hold. */
  maxDays: number;
}

/** A range of local dates as instants: [from, to) from the start of the first date to the start of the day after the last. */
export interface DateRange {
  timezone: string;
  from: number;
  to: number;
}

function localDate(name: string, text: string, zone: string): DateTime {
  const date = DateTime.fromISO(text, { zone });
  if (!date.isValid) throw invalidRequest(`querystring/${name} ${text} is not a date of the calendar`);
  return date;
}

/** The local date (YYYY-MM-DD) of an instant in `zone`. */
export function localDateOf(time: number, zone: string): string {
  return DateTime.fromSeconds(time, { zone }).toISODate()!;
}

/** The zone a query's dates are in: the one it names, else the profile's. */
function zoneOf(query: DateRangeQuery, personZone: string): string {
  if (query.timezone === undefined) return profileZone(personZone);
  const zone = canonicalTimeZone(query.timezone);
  if (zone === null) throw invalidRequest(`querystring/timezone must be an IANA time zone name such as Europe/Berlin, got "${query.timezone}"`);
  return zone;
}

/** The range a query asks for; `personZone` the profile's zone, `now` the server's clock. */
export function parseDateRange(query: DateRangeQuery, personZone: string, now: number, rules: DateRangeRules): DateRange {
  return rangeInZone(query, zoneOf(query, personZone), now, rules);
}

function rangeInZone(query: DateRangeQuery, timezone: string, now: number, rules: DateRangeRules): DateRange {
  // Local midnights (luxon puts a date's start where the clock jumps if midnight itself is skipped).
  const last = query.end_date === undefined ? DateTime.fromSeconds(now, { zone: timezone }).startOf('day') : localDate('end_date', query.end_date, timezone);
  const first = query.start_date === undefined ? last.minus({ days: rules.defaultDays - 1 }) : localDate('start_date', query.start_date, timezone);
  const days = Math.round(last.diff(first, 'days').days) + 1;
  const endSource = query.end_date === undefined ? ' (default: today)' : '';
  if (days < 1) throw invalidRequest(`querystring/end_date${endSource} ${last.toISODate()} is before start_date ${first.toISODate()}`);
  if (days > rules.maxDays) {
    throw invalidRequest(`the range from start_date to end_date${endSource} holds ${days} dates; at most ${rules.maxDays}`);
  }
  return { timezone, from: first.toSeconds(), to: last.plus({ days: 1 }).startOf('day').toSeconds() };
}

/**
 * The local dates in `zone` that the ranges [start_time, end_time) touch, ascending. The zone's
 * calendar is asked once per date, not once per range: a week of minutes uploaded in bursts is
 * thousands of ranges over a few dates.
 */
export function datesOfRanges(ranges: ReadonlyArray<{ start_time: number; end_time: number }>, zone: string): string[] {
  const dates = new Set<string>();
  // [dayStart, dayEnd): the instants of the last date looked up.
  let dayStart = Infinity;
  let dayEnd = -Infinity;
  for (const { start_time, end_time } of ranges) {
    for (let time = start_time; time < end_time; time = dayEnd) {
      if (time < dayStart || time >= dayEnd) {
        const day = DateTime.fromSeconds(time, { zone }).startOf('day');
        dates.add(day.toISODate()!);
        dayStart = Math.min(day.toSeconds(), time);
        dayEnd = day.plus({ days: 1 }).startOf('day').toSeconds();
      }
    }
  }
  return [...dates].sort();
}

/**
 * What a data event says of the ranges [start_time, end_time) a write changed (docs/webhooks.md):
 * the local dates in `zone` they touch, ascending, and per date one range from the first changed
 * instant of that date to the last — each range cut at the zone's midnights, so that a date's range
 * never reaches into another date (a date of 23 or 25 hours where the clocks change). The calendar
 * is asked once per date, not once per range.
 */
export function changeOfRanges(ranges: readonly MinuteRange[], zone: string): { dates: string[]; ranges: MinuteRange[] } {
  const spans: DatedSpan[] = [];
  // [dayStart, dayEnd): the instants of the last date looked up.
  let date = '';
  let dayStart = Infinity;
  let dayEnd = -Infinity;
  for (const { start_time, end_time } of ranges) {
    for (let time = start_time; time < end_time; time = Math.min(end_time, dayEnd)) {
      if (time < dayStart || time >= dayEnd) {
        const day = DateTime.fromSeconds(time, { zone }).startOf('day');
        date = day.toISODate()!;
        dayStart = Math.min(day.toSeconds(), time);
        dayEnd = day.plus({ days: 1 }).startOf('day').toSeconds();
      }
      spans.push({ date, start_time: time, end_time: Math.min(end_time, dayEnd) });
    }
  }
  return rangesByDate(spans);
}

/** The dates of kept plans' days, by their boundaries (a kept plan is never modified). */
const datesOfBoundaries = new WeakMap<readonly number[], readonly string[]>();

/**
 * The local dates (YYYY-MM-DD) of the days whose local midnights in `zone` are `boundaries`, one
 * fewer than the boundaries; worked out once per boundaries array (a kept plan's).
 */
export function datesOfDays(boundaries: readonly number[], zone: string): readonly string[] {
  let dates = datesOfBoundaries.get(boundaries);
  if (dates === undefined) {
    dates = boundaries.slice(0, -1).map((start) => DateTime.fromSeconds(start, { zone }).toISODate()!);
    datesOfBoundaries.set(boundaries, dates);
  }
  return dates;
}

/** The zone a person's dates are counted in: the profile's, or UTC if the runtime no longer knows it. */
export function profileZone(timezone: string): string {
  return canonicalTimeZone(timezone) ?? 'UTC';
}

/** What a change of a person's sleep or weight tells apps: its dates in the person's zone (store/sleep.ts). */
export function dataChange(zone: string, now: number, coalesceSeconds: number): DataChange {
  return { now, coalesceSeconds, dateOf: (time) => localDateOf(time, zone) };
}
