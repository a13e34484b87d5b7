/**
 * Reading a person's daily summary as `GET /v1/users/me/summary/daily/` reads it
 * (./daily-summaries.ts), for the range of local dates a query names. The
 * "Your data" pages (web/pages/data-pages.ts) read through here, so that a person sees the numbers
 * their apps get; test/web/data-pages.test.ts holds the two equal.
 */
import { SUMMARY_DATE_RULES, type SummaryDay, type SummaryField } from './daily-summary.js';
import { dailySummaries } from './daily-summaries.js';
import { parseDateRange, type DateRangeQuery } from './local-dates.js';
import type { SummaryStore } from '../store/daily-summary.js';

/** Whose summary: the person, their profile's zone and stride length (distance derived from steps). */
export interface SummaryPerson {
  userId: string;
  timezone: string;
  strideCm: number | null;
}

export interface DailySummary {
  timezone: string;
  days: SummaryDay[];
}

export type DailySummaryReader = (person: SummaryPerson, query: DateRangeQuery, fields: ReadonlySet<SummaryField>, now: number) => Promise<DailySummary>;

/** The daily summary of a query of dates, for the pages a person reads (the same as apps get). */
export function createDailySummaryReader(summary: SummaryStore): DailySummaryReader {
  return async (person, query, fields, now) => {
    const range = parseDateRange(query, person.timezone, now, SUMMARY_DATE_RULES);
    // The fields are the page's own; no zones are counted without a maximum heart rate.
    const reader = { userId: person.userId, scopes: [], profile: { stride_length_cm: person.strideCm, birth_year: null, max_heart_rate: null } };
    return { timezone: range.timezone, days: await dailySummaries(summary, reader, range, fields) };
  };
}
