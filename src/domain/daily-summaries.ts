/**
 * Reading the daily summary of a person's local dates (docs/api.md "Daily summary"), for
 * `/v1/users/me/summary/daily/` and the Fitbit-compatible daily activity summary alike: each kind
 * is read only when the token holds the scope that reads it, every kind in one turn of reads
 * (store/daily-summary.ts), and its fields appear only then (./daily-summary.ts). The minutes of
 * steps, heart rate and calories are read only for the fields counted minute by minute (./daily-activity.ts):
 * the activity levels, and the heart-rate zones of a profile that gives a maximum heart rate.
 */
import { SUMMARY_KINDS, type SummaryStore } from '../store/daily-summary.js';
import type { Profile } from '../store/profiles.js';
import { dayPlanOf } from './active-minutes.js';
import { activityOfDays, type DayActivity } from './daily-activity.js';
import { summaryDays, visibleFields, type SummaryDay, type SummaryField } from './daily-summary.js';
import { datesOfDays, type DateRange } from './local-dates.js';

/** Whose summary, and what their token may read: a bearer check's `auth` will do. */
export interface SummaryReader {
  userId: string;
  scopes: readonly string[];
  profile: Pick<Profile, 'stride_length_cm' | 'birth_year' | 'max_heart_rate'>;
}

/**
 * The summary of each local date of `range`, oldest first, with the fields `reader`'s scopes see
 * (or, for a person's own pages, the `fields` asked for).
 */
export async function dailySummaries(store: SummaryStore, reader: SummaryReader, range: DateRange, fields: ReadonlySet<SummaryField> = visibleFields(reader.scopes)): Promise<SummaryDay[]> {
  return (await summariesAndActivity(store, reader, range, fields)).days;
}

/**
 * The summaries as dailySummaries reads them, with the zones and active minutes they were counted
 * from (./daily-activity.ts; absent when no field needed the minutes): for an answer that shows
 * more of them than the summary's fields, such as the Fitbit-compatible daily summary, from the
 * same one read.
 */
export async function summariesAndActivity(store: SummaryStore, reader: SummaryReader, range: DateRange, fields: ReadonlySet<SummaryField> = visibleFields(reader.scopes)): Promise<{ days: SummaryDay[]; activity?: readonly DayActivity[] }> {
  const plan = dayPlanOf(range);
  const { profile } = reader;
  const zonesCounted = fields.has('heart_rate_zones') && (profile.max_heart_rate !== null || profile.birth_year !== null);
  const kinds =
    (fields.has('steps') ? SUMMARY_KINDS.activity : 0) |
    (fields.has('resting_heart_rate') ? SUMMARY_KINDS.heartRate : 0) |
    (fields.has('minutes_asleep') ? SUMMARY_KINDS.sleep : 0) |
    (fields.has('weight') ? SUMMARY_KINDS.weight : 0) |
    (fields.has('sedentary_minutes') || zonesCounted ? SUMMARY_KINDS.minutes : 0);
  const figures = await store.figures(reader.userId, plan, range, kinds, profile.stride_length_cm);
  const activity = figures.minuteDays && activityOfDays(plan.boundaries, datesOfDays(plan.boundaries, range.timezone), figures.minuteDays, profile);
  return { days: summaryDays(plan.boundaries, range.timezone, fields, { ...figures, activity }), ...(activity && { activity }) };
}
