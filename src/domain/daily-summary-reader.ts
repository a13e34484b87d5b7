/**
 * Reading a person's daily summary (domain/daily-summary.ts) as `GET /v1/users/me/summary/daily/`
 * reads it (api/summary.ts): the range of local dates a query names, its day plan, the summary
 * store's one statement for the kinds the fields need, and the days as the route answers them. The
 * "Your data" pages (web/pages/data-pages.ts) read through here, so that a person sees the numbers
 * their apps get; test/web/data-pages.test.ts holds the two equal.
 */
import { SUMMARY_DATE_RULES, summaryDays, type SummaryDay, type SummaryField, type SummarySources } from './daily-summary.js';
import { keptDateRanges, type DateRangeQuery } from './local-dates.js';
import { keptPlans } from './step-series.js';
import { SUMMARY_KINDS, type SummaryStore } from '../store/daily-summary.js';
import { SUM_METRIC_STORAGE } from '../store/minute-series.js';

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

/** Sums per day in the API's unit (calories are stored in tenths). */
const inUnits = (sums: readonly number[], scale: number) => (scale === 1 ? sums : sums.map((sum) => sum / scale));

/** The store's kinds that `fields` need, as bits of SUMMARY_KINDS. */
function kindsOf(fields: ReadonlySet<SummaryField>): number {
  return (
    (fields.has('steps') ? SUMMARY_KINDS.activity : 0) |
    (fields.has('resting_heart_rate') ? SUMMARY_KINDS.heartRate : 0) |
    (fields.has('minutes_asleep') ? SUMMARY_KINDS.sleep : 0) |
    (fields.has('weight') ? SUMMARY_KINDS.weight : 0)
  );
}

/** A reader with its own kept ranges and plans (decision 0005): a range is read often, by many people. */
export function createDailySummaryReader(summary: SummaryStore): DailySummaryReader {
  const planOf = keptPlans();
  const rangeOf = keptDateRanges(SUMMARY_DATE_RULES);
  return async (person, query, fields, now) => {
    const range = rangeOf(query, person.timezone, now);
    const plan = planOf({ timezone: range.timezone, granularity: 'day', start: range.from, end: range.to });
    const figures = await summary.figures(person.userId, plan, range, kindsOf(fields), person.strideCm);
    const sources: SummarySources = {
      ...figures,
      calories: figures.calories && inUnits(figures.calories, SUM_METRIC_STORAGE.calories.scale),
    };
    return { timezone: range.timezone, days: summaryDays(plan.boundaries, range.timezone, fields, sources) };
  };
}
