/**
 * Fitbit's body weight on Stride's measurements: the weight logs of a date, a period or a range (at
 * most 31 days, as Fitbit's), the body time series of weight and fat, and the log of a weight
 * (form fields `weight`, `date`, `time`, `fat`). Weights are in kilograms, or pounds for `en_US`
 * (units.ts); `bmi` is left out, since Stride holds no height. A log's `logId` is Stride's
 * measurement id, a string.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { MAX_FAT_PERCENT, MAX_KG, MIN_FAT_PERCENT, MIN_KG, weightInput, weightProblem } from '../../domain/body-weight.js';
import { dataChange, profileZone } from '../../domain/local-dates.js';
import type { StoredWeight } from '../../store/body-weight.js';
import { insufficientScope } from '../bearer.js';
import { datesOf, dayOf, localDate, PERIODS } from './dates.js';
import { FitbitError, validation } from './errors.js';
import { formField, optionalFormField, type FormBody } from './forms.js';
import { daySeries, DELETED, described, fitbitRoute } from './route-schema.js';
import { kilogramsFrom, unitsOf, weightIn, type Units } from './units.js';

const LOG_DATES = { periods: ['1d', '7d', '30d', '1w', '1m'] as const, maxDays: 31 };
const SERIES_DATES = { periods: PERIODS, maxDays: 1095 };

function logOf(weight: StoredWeight, zone: string, units: Units) {
  const local = DateTime.fromSeconds(weight.time, { zone });
  return {
    date: local.toISODate()!,
    ...(weight.fat_hundredths === null ? {} : { fat: weight.fat_hundredths / 100 }),
    logId: weight.id,
    source: 'API',
    time: local.toFormat('HH:mm:ss'),
    weight: weightIn(units, weight.kg_hundredths / 100),
  };
}

export async function bodyRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock, config } = app.ctx;
  const requireScope = (request: FastifyRequest, scope: string) => {
    if (!request.auth.scopes.includes(scope)) throw insufficientScope(scope);
  };

  const logs = async (request: FastifyRequest) => {
    requireScope(request, 'read_body');
    const { date, end } = request.params as { date: string; end?: string };
    const zone = profileZone(request.auth.profile.timezone);
    const dates = end === undefined ? dayOf(date, zone, clock()) : datesOf(date, end, zone, clock(), LOG_DATES);
    const units = unitsOf(request);
    return { weight: (await stores.bodyWeight.within(request.auth.userId, dates.from, dates.to)).map((weight) => logOf(weight, zone, units)) };
  };
  const logRoute = fitbitRoute('Weight logs of a date, a period or a range of at most 31 days (Fitbit\'s weight)', { 200: described('The weight logs, oldest first', { weight: { type: 'array', items: described('A weight log', {}) } }) });
  app.get('/1/user/:userId/body/log/weight/date/:date.json', logRoute, logs);
  app.get('/1/user/:userId/body/log/weight/date/:date/:end.json', logRoute, logs);

  /** `body-weight` or `body-fat` per date: the last measurement of the date, or "0" without one. */
  const series = (kind: 'weight' | 'fat') => async (request: FastifyRequest) => {
    requireScope(request, 'read_body');
    const { date, end } = request.params as { date: string; end: string };
    const zone = profileZone(request.auth.profile.timezone);
    const dates = datesOf(date, end, zone, clock(), SERIES_DATES);
    const units = unitsOf(request);
    const lastOfDate = new Map<string, StoredWeight>();
    for (const weight of await stores.bodyWeight.within(request.auth.userId, dates.from, dates.to)) lastOfDate.set(DateTime.fromSeconds(weight.time, { zone }).toISODate()!, weight);
    const valueOf = (weight: StoredWeight | undefined) => {
      if (!weight) return '0';
      if (kind === 'weight') return String(weightIn(units, weight.kg_hundredths / 100));
      return weight.fat_hundredths === null ? '0' : String(weight.fat_hundredths / 100);
    };
    return { [`body-${kind}`]: dates.dates.map((dateTime) => ({ dateTime, value: valueOf(lastOfDate.get(dateTime)) })) };
  };
  app.get('/1/user/:userId/body/weight/date/:date/:end.json', fitbitRoute('Weight per date (Fitbit\'s body time series)', { 200: daySeries('body-weight: one entry a local date') }), series('weight'));
  app.get('/1/user/:userId/body/fat/date/:date/:end.json', fitbitRoute('Body fat per date (Fitbit\'s body time series)', { 200: daySeries('body-fat: one entry a local date') }), series('fat'));

  app.post('/1/user/:userId/body/log/weight.json', fitbitRoute('Log a weight (Fitbit\'s weight)', { 201: described('The weight logged', { weightLog: described('A weight log', {}) }) }, [400, 415]), async (request, reply: FastifyReply) => {
    requireScope(request, 'write_body');
    const form = request.body as FormBody;
    const units = unitsOf(request);
    const zone = profileZone(request.auth.profile.timezone);
    const now = clock();
    const day = localDate(formField(form, 'date'), zone, now);
    const timeText = optionalFormField(form, 'time') ?? '12:00:00';
    const time = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(timeText);
    if (!time || Number(time[1]) > 23 || Number(time[2]) > 59 || Number(time[3] ?? 0) > 59) throw validation('time', 'time must be in the format HH:mm:ss.');
    const weight = Number(formField(form, 'weight'));
    const kg = kilogramsFrom(units, weight);
    if (!Number.isFinite(weight) || kg < MIN_KG || kg > MAX_KG) throw validation('weight', `weight must be a number from ${MIN_KG} to ${MAX_KG} kg.`);
    const fatText = optionalFormField(form, 'fat');
    const fat = fatText === undefined ? null : Math.round(Number(fatText) * 100) / 100;
    if (fat !== null && !(fat >= MIN_FAT_PERCENT && fat <= MAX_FAT_PERCENT)) throw validation('fat', `fat must be a percentage from ${MIN_FAT_PERCENT} to ${MAX_FAT_PERCENT}.`);
    const body = { time: day.set({ hour: Number(time[1]), minute: Number(time[2]), second: Number(time[3] ?? 0) }).toSeconds(), kg, fat_percent: fat };
    const problem = weightProblem(body, now, '');
    if (problem !== null) throw validation('date', problem);
    const saved = await stores.bodyWeight.save(request.auth.userId, weightInput(body), dataChange(zone, now, config.webhooks.coalesceSeconds));
    return reply.code(201).send({ weightLog: logOf(saved, zone, units) });
  });

  app.delete('/1/user/:userId/body/log/weight/:logId.json', fitbitRoute('Delete a weight log (Fitbit\'s weight)', DELETED, [404]), async (request, reply: FastifyReply) => {
    requireScope(request, 'write_body');
    const { logId } = request.params as { logId: string };
    const zone = profileZone(request.auth.profile.timezone);
    const removed = await stores.bodyWeight.remove(request.auth.userId, logId, dataChange(zone, clock(), config.webhooks.coalesceSeconds));
    if (removed === null) throw new FitbitError(404, 'not_found', 'No weight log of this person has that logId.', 'log-id');
    return reply.code(204).send();
  });
}
