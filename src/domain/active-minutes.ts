/**
 * The zones and active minutes of a person's local dates (./daily-activity.ts), as the daily
 * summary and the Fitbit-compatible routes count them: one read of the person's minutes of steps,
 * heart rate and calories and of their sleep sessions, each date counted from them. The unpacked
 * minutes are kept between reads (store/minute-days.ts); the counting itself is done each time
 * (about 15 µs a date) — keeping the counts too was measured and let go
 * (docs/lab-notes/2026-11-29-speed-mechanisms-rounds.md).
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { SUMMARY_KINDS, type SummaryStore } from '../store/daily-summary.js';
import { activityOfDays, type DayActivity } from './daily-activity.js';
import type { HeartRateProfile } from './heart-rate-zones.js';
import { datesOfDays, type DateRange } from './local-dates.js';
import { keptPlans } from './kept-plans.js';

/** Whose zones and active minutes: the person's id and the profile fields the maximum comes from (a bearer check's `auth` will do). */
export interface ActivityPerson {
  userId: string;
  profile: HeartRateProfile;
}

const planOf = keptPlans();

/** The local days of a range of dates, as the daily summary plans them. */
export function dayPlanOf(range: DateRange): BucketPlan {
  return planOf({ timezone: range.timezone, granularity: 'day', start: range.from, end: range.to });
}

/**
 * The zones and active minutes of each local date of `range` (parseDateRange makes one from
 * `start_date`, `end_date` and a zone), oldest first: one read of the person's
 * minutes of steps and heart rate and of their sleep sessions, each date counted as
 * activityOfDays counts it.
 */
export async function dailyActivity(summary: SummaryStore, person: ActivityPerson, range: DateRange): Promise<DayActivity[]> {
  const plan = dayPlanOf(range);
  const figures = await summary.figures(person.userId, plan, range, SUMMARY_KINDS.minutes, null);
  return activityOfDays(plan.boundaries, datesOfDays(plan.boundaries, range.timezone), figures.minuteDays!, person.profile);
}
