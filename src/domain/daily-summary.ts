/**
 * The daily summary (docs/api.md "Daily summary"): a row per local date of a range with the day's
 * steps, distance and calories, its active minutes, resting heart rate and heart-rate zones,
 * minutes asleep and weight — each field only when the token holds the scope that reads it, so
 * that one call tells an app no more than the kind-specific routes would.
 */
import { lastIndexAtOrBefore } from '../calendar/step-buckets.js';
import type { SummaryFigures } from '../store/daily-summary.js';
import { SERIES_METRICS } from '../store/series-writer.js';
import type { DayActivity } from './daily-activity.js';
import { ZONE_NAMES, type ZoneName } from './heart-rate-zones.js';
import { datesOfDays } from './local-dates.js';
import { minutesShown } from './sleep-sessions.js';

/** Stored units of calories in a kcal: the summary answers kcal. */
const CALORIE_SCALE = SERIES_METRICS.calories.scale;

/** Dates of a summary: today by default, at most 366 (a leap year). */
export const SUMMARY_DATE_RULES = { defaultDays: 1, maxDays: 366 } as const;

/** Which fields a token may see, by the scope that reads each. */
export const SUMMARY_FIELD_SCOPES = {
  steps: 'read_activity',
  distance: 'read_activity',
  calories: 'read_activity',
  sedentary_minutes: 'read_activity',
  lightly_active_minutes: 'read_activity',
  fairly_active_minutes: 'read_activity',
  very_active_minutes: 'read_activity',
  resting_heart_rate: 'read_heartrate',
  heart_rate_zones: 'read_heartrate',
  active_zone_minutes: 'read_heartrate',
  minutes_asleep: 'read_sleep',
  weight: 'read_body',
} as const;

export type SummaryField = keyof typeof SUMMARY_FIELD_SCOPES;

/** The fields counted minute by minute (./daily-activity.ts). */
export const ACTIVITY_LEVEL_FIELDS = ['sedentary_minutes', 'lightly_active_minutes', 'fairly_active_minutes', 'very_active_minutes'] as const satisfies readonly SummaryField[];

export interface SummaryDay {
  date: string;
  steps?: number;
  distance?: number;
  calories?: number;
  sedentary_minutes?: number;
  lightly_active_minutes?: number;
  fairly_active_minutes?: number;
  very_active_minutes?: number;
  resting_heart_rate?: number | null;
  /** Minutes per zone; null without a maximum heart rate. */
  heart_rate_zones?: Record<ZoneName, number> | null;
  active_zone_minutes?: number | null;
  minutes_asleep?: number;
  weight?: number | null;
}

/**
 * What was read for the days of a summary (store/daily-summary.ts; a kind not read is absent), and
 * per day its zones and active minutes (absent with the activity levels visible means none: no day read).
 */
export type SummarySources = Omit<SummaryFigures, 'minuteDays'> & { activity?: readonly DayActivity[] };

const nullableNumber = { type: ['number', 'null'] } as const;
const minutesOfDate = (description: string) => ({ type: 'integer', minimum: 0, description: `minutes, ${description}, read_activity (docs/api.md, "Heart-rate zones and active minutes")` }) as const;

export const DAILY_SUMMARY_JSON_SCHEMA = {
  type: 'object',
  required: ['timezone', 'days'],
  additionalProperties: false,
  properties: {
    timezone: { type: 'string' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        required: ['date'],
        additionalProperties: false,
        properties: {
          date: { type: 'string', description: 'YYYY-MM-DD, a local date of the range' },
          steps: { type: 'integer', description: 'read_activity' },
          distance: { type: 'integer', description: 'metres, read_activity (derived from steps where no distance was sent)' },
          calories: { type: 'number', description: 'kcal, one decimal, read_activity' },
          sedentary_minutes: minutesOfDate('awake with data and without moving'),
          lightly_active_minutes: minutesOfDate('from 1 to 99 steps'),
          fairly_active_minutes: minutesOfDate('from 100 to 129 steps, or fewer with the heart rate in cardio or peak'),
          very_active_minutes: minutesOfDate('130 steps or more'),
          resting_heart_rate: { ...nullableNumber, description: 'beats per minute, one decimal, read_heartrate; null when the day has too little data' },
          heart_rate_zones: {
            type: ['object', 'null'],
            required: [...ZONE_NAMES],
            additionalProperties: false,
            properties: Object.fromEntries(ZONE_NAMES.map((name) => [name, { type: 'integer', minimum: 0 }])) as Record<ZoneName, { type: 'integer'; minimum: 0 }>,
            description: 'minutes whose average heart rate fell in each zone, read_heartrate; null when the profile gives no maximum heart rate',
          },
          active_zone_minutes: { type: ['integer', 'null'], minimum: 0, description: 'fat-burn minutes once, cardio and peak minutes twice, read_heartrate; null when the profile gives no maximum heart rate' },
          minutes_asleep: { type: 'integer', description: 'of the sessions that end on the date, read_sleep' },
          weight: { ...nullableNumber, description: 'kg, the date\'s last measurement, read_body; null when there is none' },
        },
      },
    },
  },
} as const;

/** The fields a token holding `scopes` may see. */
export function visibleFields(scopes: readonly string[]): Set<SummaryField> {
  const fields = Object.entries(SUMMARY_FIELD_SCOPES).filter(([, scope]) => scopes.includes(scope)).map(([field]) => field as SummaryField);
  return new Set(fields);
}

/**
 * The days of the range whose local midnights are `boundaries` (days.length = boundaries.length − 1),
 * each with the fields `fields` names.
 */
export function summaryDays(boundaries: readonly number[], timezone: string, fields: ReadonlySet<SummaryField>, sources: SummarySources): SummaryDay[] {
  const dates = datesOfDays(boundaries, timezone);
  const count = dates.length;
  let asleep: number[] | undefined;
  if (fields.has('minutes_asleep')) {
    asleep = new Array<number>(count).fill(0);
    for (const session of sources.sleep ?? []) {
      const index = lastIndexAtOrBefore(boundaries, session.end_time);
      // Each session's minutes as the sleep route shows them, summed per date.
      if (index >= 0 && index < count) asleep[index]! += minutesShown(session.asleep_seconds);
    }
  }
  // The last measurement of each date: measurements come oldest first.
  let weight: Array<number | null> | undefined;
  if (fields.has('weight')) {
    weight = new Array<number | null>(count).fill(null);
    for (const measured of sources.weights ?? []) {
      const index = lastIndexAtOrBefore(boundaries, measured.time);
      if (index >= 0 && index < count) weight[index] = measured.kg_hundredths / 100;
    }
  }
  const activity = fields.has('steps');
  const distance = fields.has('distance');
  const calories = fields.has('calories');
  const levels = fields.has('sedentary_minutes');
  const resting = fields.has('resting_heart_rate');
  const zones = fields.has('heart_rate_zones');
  const days = new Array<SummaryDay>(count);
  for (let index = 0; index < count; index++) {
    const day: SummaryDay = { date: dates[index]! };
    if (activity) day.steps = sources.steps?.[index] ?? 0;
    if (distance) day.distance = sources.distance?.[index] ?? 0;
    if (calories) day.calories = (sources.calories?.[index] ?? 0) / CALORIE_SCALE;
    const counted = sources.activity?.[index];
    if (levels) for (const field of ACTIVITY_LEVEL_FIELDS) day[field] = counted?.[field] ?? 0;
    if (resting) day.resting_heart_rate = sources.resting?.[index] ?? null;
    if (zones) {
      const zoneMinutes = counted?.heart_rate_zones ?? null;
      day.heart_rate_zones = zoneMinutes && { out_of_range: zoneMinutes.out_of_range.minutes, fat_burn: zoneMinutes.fat_burn.minutes, cardio: zoneMinutes.cardio.minutes, peak: zoneMinutes.peak.minutes };
      day.active_zone_minutes = counted?.active_zone_minutes ?? null;
    }
    if (asleep) day.minutes_asleep = asleep[index]!;
    if (weight) day.weight = weight[index]!;
    days[index] = day;
  }
  return days;
}
