/**
 * Fitbit's resources of heart-rate zones and active minutes, counted as Stride's own daily summary
 * counts them (domain/daily-activity.ts): the zones of a heart-rate day (`heartRateZones`: Fitbit's
 * four names, each zone's bpm bounds, minutes, and `caloriesOut` — the calories uploaded for those
 * minutes), the active zone minutes series, the series of sedentary, lightly, fairly and very
 * active minutes, and `activityCalories` (the calories uploaded for the lightly, fairly and very
 * active minutes). Without a maximum heart rate (no `birth_year` or `max_heart_rate` in the
 * profile) a date has no zones: `heartRateZones` is empty and active zone minutes leave it out.
 */
import type { FastifyRequest } from 'fastify';
import { dailyActivity } from '../../domain/active-minutes.js';
import type { DayActivity } from '../../domain/daily-activity.js';
import { ACTIVE_ZONE_MINUTE_WEIGHTS, ZONE_NAMES } from '../../domain/heart-rate-zones.js';
import type { SummaryStore } from '../../store/daily-summary.js';
import type { LocalDates } from './dates.js';

/** Fitbit's names of the zones, lowest first. */
const ZONE_LABELS = { out_of_range: 'Out of Range', fat_burn: 'Fat Burn', cardio: 'Cardio', peak: 'Peak' } as const;

/** The resources counted from each minute's activity level, by Fitbit's name. */
export const LEVEL_RESOURCES = {
  activityCalories: 'activity_calories',
  minutesSedentary: 'sedentary_minutes',
  minutesLightlyActive: 'lightly_active_minutes',
  minutesFairlyActive: 'fairly_active_minutes',
  minutesVeryActive: 'very_active_minutes',
} as const satisfies Record<string, keyof DayActivity>;

export type LevelResource = keyof typeof LEVEL_RESOURCES;

export const isLevelResource = (resource: string): resource is LevelResource => Object.hasOwn(LEVEL_RESOURCES, resource);

/** Whether a person's profile gives a maximum heart rate, so that their dates have zones. */
export const hasMaximum = (profile: { birth_year: number | null; max_heart_rate: number | null }) => profile.birth_year !== null || profile.max_heart_rate !== null;

/** The zones and active minutes of each date of `dates`, as the daily summary counts them. */
export function activityOf(summary: SummaryStore, request: FastifyRequest, dates: LocalDates): Promise<DayActivity[]> {
  return dailyActivity(summary, request.auth, { timezone: dates.zone, from: dates.from, to: dates.to });
}

/** `heartRateZones` of a date: Fitbit's four zones, or none without a maximum heart rate. */
export function heartRateZones(activity: DayActivity | undefined) {
  const zones = activity?.heart_rate_zones;
  if (!zones) return [];
  return ZONE_NAMES.map((zone) => ({ name: ZONE_LABELS[zone], min: zones[zone].min, max: zones[zone].max, minutes: zones[zone].minutes, caloriesOut: zones[zone].calories }));
}

/** A date's active zone minutes in Fitbit's shape; null without zones. */
export function activeZoneMinutes(activity: DayActivity) {
  const zones = activity.heart_rate_zones;
  if (!zones || activity.active_zone_minutes === null) return null;
  return {
    activeZoneMinutes: activity.active_zone_minutes,
    fatBurnActiveZoneMinutes: zones.fat_burn.minutes * ACTIVE_ZONE_MINUTE_WEIGHTS.fat_burn,
    cardioActiveZoneMinutes: zones.cardio.minutes * ACTIVE_ZONE_MINUTE_WEIGHTS.cardio,
    peakActiveZoneMinutes: zones.peak.minutes * ACTIVE_ZONE_MINUTE_WEIGHTS.peak,
  };
}
