/**
 * Fitbit's activity resources on the same stores as `/v1/…`: the daily time series of steps,
 * distance and calories, of the activity levels' minutes and activity calories (activity-levels.ts),
 * heart rate per day (resting heart rate and zones), and the intraday datasets of a
 * day (steps, distance, calories, heart) by 1, 5 or 15 minutes, optionally within a time window.
 * Each value is the one `/v1/…` answers for the same person and range — sums of the same buckets,
 * heart rate the mean of the minutes' averages to one decimal — in Fitbit's shape: daily values as
 * strings, intraday values as numbers, distance in kilometres or miles (units.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { profileZone } from '../../domain/local-dates.js';
import { answerKey, heartRateAnswers } from '../../domain/heart-rate-answers.js';
import type { DayActivity } from '../../domain/daily-activity.js';
import { keptPlans } from '../../domain/kept-plans.js';
import { createSeriesReader, type SeriesReader } from '../../domain/step-series.js';
import { SUM_METRICS } from '../../domain/sum-metrics.js';
import { bucketsFromDays, heartRateBuckets, heartRateDaysOf, type HeartRateBuckets } from '../../store/heart-rate-series.js';
import type { SumMetric } from '../../store/series-writer.js';
import { insufficientScope } from '../bearer.js';
import { clockMinutes, keptDates, PERIODS, type LocalDates } from './dates.js';
import { FitbitError, validation } from './errors.js';
import { clockText, localSecondsOfDay } from './local-clock.js';
import { activeZoneMinutes, activityOf, hasMaximum, heartRateZones, isLevelResource, LEVEL_RESOURCES, type LevelResource } from './activity-levels.js';
import { daySeries, described, fitbitRoute } from './route-schema.js';
import { distanceIn, unitsOf, type Units } from './units.js';

const SUM_RESOURCES: readonly SumMetric[] = ['steps', 'distance', 'calories'];
/** Fitbit's rules: every period, ranges of up to three years for activity; a year for heart rate. */
const ACTIVITY_DATES = { periods: PERIODS, maxDays: 1095 };
const HEART_DATES = { periods: ['1d', '7d', '30d', '1w', '1m'] as const, maxDays: 366 };
/** Intraday detail levels and their minutes; heart rate's `1sec` answers the minutes Stride holds. */
const DETAIL_MINUTES: Readonly<Record<string, number>> = { '1sec': 1, '1min': 1, '5min': 5, '15min': 15 };

/** A window of the local clock, in minutes after midnight, both ends included. */
interface ClockWindow {
  from: number;
  to: number;
}

/** Whether the entry at each index of a day's dataset (its seconds after local midnight) lies in `range` (all without one). */
function windowOf(seconds: readonly number[], range: ClockWindow | undefined): (index: number) => boolean {
  return (i) => !range || (seconds[i]! >= range.from * 60 && seconds[i]! <= range.to * 60);
}

interface DaySeries {
  dateTime: string;
  value: string;
}

interface DatasetEntry {
  time: string;
  value: number;
}

export async function activityRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const sums: Partial<Record<SumMetric, SeriesReader<SumMetric>>> = {};
  for (const metric of SUM_RESOURCES) sums[metric] = createSeriesReader(stores[metric].sums, metric, 10 ** SUM_METRICS[metric].decimals);
  const heartReadDays = stores.heartRate.readDays;
  const activityDates = keptDates(ACTIVITY_DATES);
  const heartDates = keptDates(HEART_DATES);
  const oneDay = keptDates({ periods: ['1d'], maxDays: 1 });
  const planOf = keptPlans();
  const heartAnswers = heartRateAnswers();

  /**
   * A day of heart rate by `step` minutes, with the day's value: from one read of the day rows, and
   * kept as the `/v1` minute series is (decision 0028) — the same rows read again answer the same
   * bytes.
   */
  async function heartIntraday(auth: FastifyRequest, day: LocalDates, step: number, range: ClockWindow | undefined): Promise<Buffer> {
    const userId = auth.auth.userId;
    const request = { granularity: 'minute' as const, timezone: day.zone, start: day.from, end: day.to };
    const plan = planOf(request);
    // The day's zones are counted from the same minutes: read, and kept with the answer, only for a
    // profile with a maximum heart rate.
    const [rows, activity] = await Promise.all([
      heartRateDaysOf(heartReadDays, userId, plan),
      hasMaximum(auth.auth.profile) ? activityOf(stores.summary, auth, day) : undefined,
    ]);
    const zones = JSON.stringify(activity?.[0]?.heart_rate_zones ?? null);
    const key = answerKey(userId, request, `fitbit ${step} ${range ? `${range.from}-${range.to}` : ''} ${zones}`);
    const kept = heartAnswers.find(key, plan, rows);
    if (kept !== undefined) return kept;
    const minutes = bucketsFromDays(plan, rows);
    const days = bucketsFromDays(planOf({ ...request, granularity: 'day' }), rows);
    const seconds = localSecondsOfDay(plan);
    const body = Buffer.from(
      JSON.stringify({
        'activities-heart': [{ dateTime: day.dates[0], value: heartDayValue(days, 0, activity?.[0]) }],
        'activities-heart-intraday': { dataset: heartDataset(minutes, seconds, step, windowOf(seconds, range)), datasetInterval: step, datasetType: 'minute' },
      }),
    );
    heartAnswers.keep(key, plan, rows, body);
    return body;
  }

  const requireRead = (request: FastifyRequest, resource: string) => {
    const scope = resource === 'heart' || resource === 'active-zone-minutes' ? 'read_heartrate' : 'read_activity';
    if (!request.auth.scopes.includes(scope)) throw insufficientScope(scope);
  };
  const unknownResource = (resource: string) => new FitbitError(404, 'not_found', `The resource activities/${resource.slice(0, 40)} is not served; see docs/migrating-from-fitbit.md`, 'resource');

  /** The sums per local day of `dates`, as the `/v1/…` daily series answers them. */
  async function dailySums(request: FastifyRequest, metric: SumMetric, dates: LocalDates): Promise<number[]> {
    const { auth } = request;
    const series = await sums[metric]!(auth.userId, { granularity: 'day', timezone: dates.zone, start: dates.from, end: dates.to }, auth.stepsWrittenAt, auth.profile.stride_length_cm);
    return (series[metric] as Array<{ value: number }>).map((bucket) => bucket.value);
  }

  const valueText = (metric: SumMetric, units: Units) => (value: number) => String(metric === 'distance' ? distanceIn(units, value) : value);

  async function sumSeries(request: FastifyRequest, metric: SumMetric, dates: LocalDates): Promise<DaySeries[]> {
    const text = valueText(metric, unitsOf(request));
    const values = await dailySums(request, metric, dates);
    return dates.dates.map((dateTime, i) => ({ dateTime, value: text(values[i] ?? 0) }));
  }

  async function heartSeries(request: FastifyRequest, dates: LocalDates) {
    const plan = planOf({ granularity: 'day', timezone: dates.zone, start: dates.from, end: dates.to });
    const [buckets, activity] = await Promise.all([
      heartRateBuckets(heartReadDays, request.auth.userId, plan),
      hasMaximum(request.auth.profile) ? activityOf(stores.summary, request, dates) : [],
    ]);
    return dates.dates.map((dateTime, i) => ({ dateTime, value: heartDayValue(buckets, i, activity[i]) }));
  }

  /** Active zone minutes, or a level resource's figure (its minutes, or the activity calories), per date (activity-levels.ts). */
  async function activitySeries(request: FastifyRequest, resource: string, dates: LocalDates) {
    const activity = await activityOf(stores.summary, request, dates);
    if (resource === 'active-zone-minutes') {
      return activity.flatMap((day) => {
        const value = activeZoneMinutes(day);
        return value === null ? [] : [{ dateTime: day.date, value }];
      });
    }
    const field = LEVEL_RESOURCES[resource as LevelResource];
    return activity.map((day) => ({ dateTime: day.date, value: String(day[field]) }));
  }

  const series = fitbitRoute('An activity or heart-rate time series by day (Fitbit\'s activity / heartrate)', { 200: daySeries('activities-{resource}: one entry a local date; values are strings, heart rate\'s an object with restingHeartRate') });
  app.get('/1/user/:userId/activities/:resource/date/:date/:period.json', series, async (request) => {
    const { resource, date, period } = request.params as { resource: string; date: string; period: string };
    const zone = profileZone(request.auth.profile.timezone);
    if (resource === 'heart') {
      requireRead(request, resource);
      return { 'activities-heart': await heartSeries(request, heartDates(date, period, zone, clock())) };
    }
    if (resource === 'active-zone-minutes' || isLevelResource(resource)) {
      requireRead(request, resource);
      return { [`activities-${resource}`]: await activitySeries(request, resource, activityDates(date, period, zone, clock())) };
    }
    if (!(SUM_RESOURCES as readonly string[]).includes(resource)) throw unknownResource(resource);
    requireRead(request, resource);
    const dates = activityDates(date, period, zone, clock());
    return { [`activities-${resource}`]: await sumSeries(request, resource as SumMetric, dates) };
  });

  /** A day's dataset by `detail`, within [fromMinute, toMinute] of the local clock when given. */
  async function intraday(request: FastifyRequest, reply: FastifyReply, window?: { from: string; to: string }) {
    const { resource, date, detail } = request.params as { resource: string; date: string; detail: string };
    if (resource !== 'heart' && !(SUM_RESOURCES as readonly string[]).includes(resource)) throw unknownResource(resource);
    requireRead(request, resource);
    const step = DETAIL_MINUTES[detail];
    if (step === undefined || (detail === '1sec' && resource !== 'heart')) {
      throw validation('detail-level', `Invalid detail level: ${detail.slice(0, 10)}. It must be one of 1min, 5min, 15min${resource === 'heart' ? ', 1sec' : ''}.`);
    }
    const range = window && { from: clockMinutes(window.from, 'start-time'), to: clockMinutes(window.to, 'end-time') };
    const zone = profileZone(request.auth.profile.timezone);
    const day = oneDay(date, '1d', zone, clock());
    if (resource === 'heart') return reply.type('application/json; charset=utf-8').send(await heartIntraday(request, day, step, range));
    const minuteRequest = { granularity: 'minute' as const, timezone: zone, start: day.from, end: day.to };
    const seconds = localSecondsOfDay(planOf(minuteRequest));
    const metric = resource as SumMetric;
    const { auth } = request;
    const minuteSeries = await sums[metric]!(auth.userId, minuteRequest, auth.stepsWrittenAt, auth.profile.stride_length_cm);
    const values = (minuteSeries[metric] as Array<{ value: number }>).map((bucket) => bucket.value);
    const units = unitsOf(request);
    const convert = metric === 'distance' ? (metres: number) => distanceIn(units, metres) : (value: number) => value;
    return {
      [`activities-${resource}`]: [{ dateTime: day.dates[0], value: valueText(metric, units)(minuteSeries.total) }],
      [`activities-${resource}-intraday`]: { dataset: sumDataset(values, seconds, step, windowOf(seconds, range), convert), datasetInterval: step, datasetType: 'minute' },
    };
  }

  const intradayRoute = fitbitRoute('A day\'s intraday dataset by 1, 5 or 15 minutes (Fitbit\'s activity / heartrate)', { 200: described('activities-{resource} (the day) and activities-{resource}-intraday: {dataset: [{time, value}], datasetInterval, datasetType}') });
  app.get('/1/user/:userId/activities/:resource/date/:date/1d/:detail.json', intradayRoute, (request, reply) => intraday(request, reply));
  app.get('/1/user/:userId/activities/:resource/date/:date/1d/:detail/time/:from/:to.json', intradayRoute, (request, reply) => {
    const { from, to } = request.params as { from: string; to: string };
    return intraday(request, reply, { from, to });
  });
}

/** A day's heart-rate value: its zones (activity-levels.ts), and the resting heart rate where there is one. */
export function heartDayValue(buckets: HeartRateBuckets, index: number, activity: DayActivity | undefined) {
  const resting = buckets.resting?.[index] ?? null;
  return { customHeartRateZones: [], heartRateZones: heartRateZones(activity), ...(resting === null ? {} : { restingHeartRate: resting }) };
}

/**
 * The entries of a sum metric's day: each group of `step` minutes that starts on a multiple of
 * `step` of the local clock, its sum; every group, zeros included, as Fitbit sends them.
 */
function sumDataset(values: readonly number[], seconds: readonly number[], step: number, inWindow: (i: number) => boolean, convert: (value: number) => number): DatasetEntry[] {
  const dataset: DatasetEntry[] = [];
  forEachGroup(seconds, step, inWindow, (first, end) => {
    let sum = 0;
    for (let i = first; i < end; i++) sum += values[i] ?? 0;
    dataset.push({ time: clockText(seconds[first]!), value: convert(step === 1 ? sum : Math.round(sum * 10) / 10) });
  });
  return dataset;
}

/** Heart rate's entries: each group's mean of its minutes' averages, one decimal; groups without data are left out, as Fitbit does. */
function heartDataset(buckets: HeartRateBuckets, seconds: readonly number[], step: number, inWindow: (i: number) => boolean): DatasetEntry[] {
  const dataset: DatasetEntry[] = [];
  forEachGroup(seconds, step, inWindow, (first, end) => {
    let minutes = 0;
    let sum = 0;
    for (let i = first; i < end; i++) {
      minutes += buckets.minutes[i]!;
      sum += buckets.sums[i]!;
    }
    if (minutes > 0) dataset.push({ time: clockText(seconds[first]!), value: Math.round((sum / minutes) * 10) / 10 });
  });
  return dataset;
}

/** Runs of consecutive minutes in the window whose local times fall in one `step`-minute group. */
function forEachGroup(seconds: readonly number[], step: number, inWindow: (i: number) => boolean, visit: (first: number, end: number) => void): void {
  const groupOf = (i: number) => Math.floor(seconds[i]! / (step * 60));
  for (let i = 0; i < seconds.length; ) {
    if (!inWindow(i)) {
      i++;
      continue;
    }
    const group = groupOf(i);
    let end = i + 1;
    while (end < seconds.length && inWindow(end) && groupOf(end) === group && seconds[end]! > seconds[end - 1]!) end++;
    visit(i, end);
    i = end;
  }
}

