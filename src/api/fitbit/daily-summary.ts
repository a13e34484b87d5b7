/**
 * `GET /1/user/-/activities/date/{date}.json` (activity): Fitbit's daily activity summary of one
 * local date, from the same one read as `/v1/users/me/summary/daily/` (domain/daily-summaries.ts) —
 * steps, `caloriesOut` (the calories the person's devices uploaded), `activityCalories` (those of
 * the lightly, fairly and very active minutes), `distances` (`total` only: Stride does not split
 * distance by activity), the four activity-minute fields; with heart rate read too,
 * `restingHeartRate` and `heartRateZones` — and the daily step goal. Stride logs no activities
 * (`activities` is empty), and gives no `caloriesBMR`.
 */
import type { FastifyInstance } from 'fastify';
import { summariesAndActivity } from '../../domain/daily-summaries.js';
import { profileZone } from '../../domain/local-dates.js';
import { insufficientScope } from '../bearer.js';
import { heartRateZones } from './activity-levels.js';
import { keptDates } from './dates.js';
import { described, fitbitRoute } from './route-schema.js';
import { distanceIn, unitsOf } from './units.js';

export async function dailySummaryRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const oneDay = keptDates({ periods: ['1d'], maxDays: 1 });
  const route = fitbitRoute('A local date\'s activity summary and step goal (Fitbit\'s activity)', {
    200: described('The date\'s summary, goals and activities', { summary: described('The date\'s figures', {}), goals: described('The daily goals Stride holds', {}) }),
  });
  app.get('/1/user/:userId/activities/date/:date.json', route, async (request) => {
    const { auth } = request;
    if (!auth.scopes.includes('read_activity')) throw insufficientScope('read_activity');
    const { date } = request.params as { date: string };
    const day = oneDay(date, '1d', profileZone(auth.profile.timezone), clock());
    const range = { timezone: day.zone, from: day.from, to: day.to };
    const readsHeart = auth.scopes.includes('read_heartrate');
    // read_activity shows the activity levels, so the summary counts the date's minutes once for all.
    const {
      days: [summary],
      activity,
    } = await summariesAndActivity(stores.summary, auth, range);
    const counted = activity?.[0];
    const units = unitsOf(request);
    return {
      activities: [],
      goals: { steps: auth.profile.daily_step_goal },
      summary: {
        steps: summary!.steps ?? 0,
        caloriesOut: summary!.calories ?? 0,
        activityCalories: counted?.activity_calories ?? 0,
        distances: [{ activity: 'total', distance: distanceIn(units, summary!.distance ?? 0) }],
        sedentaryMinutes: summary!.sedentary_minutes ?? 0,
        lightlyActiveMinutes: summary!.lightly_active_minutes ?? 0,
        fairlyActiveMinutes: summary!.fairly_active_minutes ?? 0,
        veryActiveMinutes: summary!.very_active_minutes ?? 0,
        ...(readsHeart && { heartRateZones: heartRateZones(counted) }),
        ...(readsHeart && typeof summary!.resting_heart_rate === 'number' && { restingHeartRate: summary!.resting_heart_rate }),
      },
    };
  });
}
