/**
 * Fitbit's sleep logs on Stride's sleep sessions: version 1.2 in the stages shape, version 1 in the
 * classic shape python-fitbit's `get_sleep` reads (light, deep and REM are "asleep", awake is
 * "awake"; Stride records no restlessness), and the log of a sleep by start and duration. A log's
 * `logId` is Stride's session id, a string; `dateOfSleep` is the local date the session ends on, and
 * its minutes asleep and awake are those `/v1/users/me/sleep/` answers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { dataChange, profileZone } from '../../domain/local-dates.js';
import { sessionProblem, sessionView } from '../../domain/sleep-sessions.js';
import { MAX_SLEEP_SESSION_SECONDS, type StoredSleepSession } from '../../store/sleep.js';
import { insufficientScope } from '../bearer.js';
import { datesOf, dayOf, localDate, type LocalDates } from './dates.js';
import { FitbitError, validation } from './errors.js';
import { formField, type FormBody } from './forms.js';
import { DELETED, described, fitbitRoute } from './route-schema.js';

const SLEEP_ANSWER = described('The sleep logs, newest first, and their summary', { sleep: { type: 'array', items: described('A sleep log', {}) }, summary: described('The logs\' totals', {}) });

/** Fitbit's longest range of sleep logs. */
const SLEEP_DATES = { periods: [], maxDays: 100 };
/** Stride's stage names as Fitbit's stages shape names them. */
const LEVEL = { awake: 'wake', light: 'light', deep: 'deep', rem: 'rem' } as const;
const LEVELS = ['deep', 'light', 'rem', 'wake'] as const;

type Level = (typeof LEVELS)[number];

const localTime = (time: number, zone: string) => DateTime.fromSeconds(time, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");

interface DayLogs {
  zone: string;
  sessions: StoredSleepSession[];
  /** The main sleep of each date: its longest session. */
  main: Set<string>;
}

export async function sleepRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock, config } = app.ctx;

  const requireScope = (request: FastifyRequest, scope: string) => {
    if (!request.auth.scopes.includes(scope)) throw insufficientScope(scope);
  };

  async function logsOf(request: FastifyRequest, dates: LocalDates): Promise<DayLogs> {
    const sessions = await stores.sleep.endingWithin(request.auth.userId, dates.from, dates.to);
    const longest = new Map<string, StoredSleepSession>();
    for (const session of sessions) {
      const date = DateTime.fromSeconds(session.end_time, { zone: dates.zone }).toISODate()!;
      const current = longest.get(date);
      if (!current || session.end_time - session.start_time > current.end_time - current.start_time) longest.set(date, session);
    }
    return { zone: dates.zone, sessions, main: new Set([...longest.values()].map((session) => session.id)) };
  }

  const datesOfRequest = (request: FastifyRequest) => {
    const { date, end } = request.params as { date: string; end?: string };
    const zone = profileZone(request.auth.profile.timezone);
    return end === undefined ? dayOf(date, zone, clock()) : datesOf(date, end, zone, clock(), SLEEP_DATES);
  };

  const stagesRoute = fitbitRoute('Sleep logs in the stages shape (Fitbit\'s sleep, version 1.2)', { 200: SLEEP_ANSWER });
  const stagesHandler = async (request: FastifyRequest) => {
    requireScope(request, 'read_sleep');
    return stagesAnswer(await logsOf(request, datesOfRequest(request)));
  };
  app.get('/1.2/user/:userId/sleep/date/:date.json', stagesRoute, stagesHandler);
  app.get('/1.2/user/:userId/sleep/date/:date/:end.json', stagesRoute, stagesHandler);

  const classicRoute = fitbitRoute('Sleep logs in the classic shape (Fitbit\'s sleep, version 1)', { 200: SLEEP_ANSWER });
  const classicHandler = async (request: FastifyRequest) => {
    requireScope(request, 'read_sleep');
    return classicAnswer(await logsOf(request, datesOfRequest(request)));
  };
  app.get('/1/user/:userId/sleep/date/:date.json', classicRoute, classicHandler);
  app.get('/1/user/:userId/sleep/date/:date/:end.json', classicRoute, classicHandler);

  /** A sleep logged by its start and duration: one stretch of light sleep (Stride keeps stages). */
  const logRoute = fitbitRoute('Log a sleep by date, start time and duration (Fitbit\'s sleep)', { 201: described('The sleep logged', { sleep: described('A sleep log in the stages shape', {}) }) }, [400, 409, 415]);
  const logHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    requireScope(request, 'write_sleep');
    const form = request.body as FormBody;
    const zone = profileZone(request.auth.profile.timezone);
    const now = clock();
    const day = localDate(formField(form, 'date'), zone, now);
    const start = /^(\d{2}):(\d{2})$/.exec(formField(form, 'startTime'));
    if (!start || Number(start[1]) > 23 || Number(start[2]) > 59) throw validation('startTime', 'startTime must be in the format HH:mm.');
    const duration = Number(formField(form, 'duration'));
    if (!Number.isInteger(duration) || duration < 60_000 || duration > MAX_SLEEP_SESSION_SECONDS * 1000) {
      throw validation('duration', `duration must be whole milliseconds from 60000 to ${MAX_SLEEP_SESSION_SECONDS * 1000}.`);
    }
    const startTime = day.set({ hour: Number(start[1]), minute: Number(start[2]) }).toSeconds();
    const endTime = startTime + Math.floor(duration / 1000);
    const session = { start_time: startTime, end_time: endTime, stages: [{ stage: 'light' as const, start_time: startTime, end_time: endTime }] };
    const problem = sessionProblem(session, now, '');
    if (problem !== null) throw validation('startTime', problem);
    const outcome = await stores.sleep.save(request.auth.userId, session, dataChange(zone, now, config.webhooks.coalesceSeconds));
    if ('overlaps' in outcome) throw new FitbitError(409, 'validation', 'The sleep overlaps a sleep already logged; delete that one first.', 'startTime');
    return reply.code(201).send({ sleep: stagesLog(outcome.saved, zone, true) });
  };
  app.post('/1.2/user/:userId/sleep.json', logRoute, logHandler);
  app.post('/1/user/:userId/sleep.json', logRoute, logHandler);

  const deleteRoute = fitbitRoute('Delete a sleep log (Fitbit\'s sleep)', DELETED, [404]);
  const deleteHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    requireScope(request, 'write_sleep');
    const { logId } = request.params as { logId: string };
    const zone = profileZone(request.auth.profile.timezone);
    const removed = await stores.sleep.remove(request.auth.userId, logId, dataChange(zone, clock(), config.webhooks.coalesceSeconds));
    if (removed === null) throw new FitbitError(404, 'not_found', 'No sleep log of this person has that logId.', 'log-id');
    return reply.code(204).send();
  };
  app.delete('/1.2/user/:userId/sleep/:logId.json', deleteRoute, deleteHandler);
  app.delete('/1/user/:userId/sleep/:logId.json', deleteRoute, deleteHandler);
}

function stagesLog(session: StoredSleepSession, zone: string, isMainSleep: boolean) {
  const view = sessionView(session, zone);
  const summary = Object.fromEntries(LEVELS.map((level) => [level, { count: 0, minutes: 0 }])) as Record<Level, { count: number; minutes: number }>;
  const seconds = Object.fromEntries(LEVELS.map((level) => [level, 0])) as Record<Level, number>;
  const data = session.stages.map((stage) => {
    const level = LEVEL[stage.stage];
    summary[level].count++;
    seconds[level] += stage.end_time - stage.start_time;
    return { dateTime: localTime(stage.start_time, zone), level, seconds: stage.end_time - stage.start_time };
  });
  for (const level of LEVELS) summary[level].minutes = Math.round(seconds[level] / 60);
  const timeInBed = Math.round((session.end_time - session.start_time) / 60);
  return {
    dateOfSleep: view.date,
    duration: (session.end_time - session.start_time) * 1000,
    efficiency: timeInBed === 0 ? 0 : Math.round((100 * view.minutes_asleep) / timeInBed),
    endTime: localTime(session.end_time, zone),
    infoCode: 0,
    isMainSleep,
    levels: { data, shortData: [], summary },
    logId: session.id,
    logType: 'auto_detected',
    minutesAfterWakeup: 0,
    minutesAsleep: view.minutes_asleep,
    minutesAwake: view.minutes_awake,
    minutesToFallAsleep: 0,
    startTime: localTime(session.start_time, zone),
    timeInBed,
    type: 'stages',
  };
}

function stagesAnswer({ zone, sessions, main }: DayLogs) {
  const sleep = sessions.map((session) => stagesLog(session, zone, main.has(session.id)));
  const stages = Object.fromEntries(LEVELS.map((level) => [level, 0])) as Record<Level, number>;
  for (const log of sleep) for (const level of LEVELS) stages[level] += log.levels.summary[level].minutes;
  return {
    // Fitbit lists the newest first.
    sleep: sleep.reverse(),
    summary: {
      stages,
      totalMinutesAsleep: sleep.reduce((sum, log) => sum + log.minutesAsleep, 0),
      totalSleepRecords: sleep.length,
      totalTimeInBed: sleep.reduce((sum, log) => sum + log.timeInBed, 0),
    },
  };
}

function classicAnswer({ zone, sessions, main }: DayLogs) {
  const sleep = sessions.map((session) => {
    const log = stagesLog(session, zone, main.has(session.id));
    const awake = session.stages.filter((stage) => stage.stage === 'awake');
    const minuteData: Array<{ dateTime: string; value: string }> = [];
    for (const stage of session.stages) {
      for (let t = stage.start_time - (stage.start_time % 60); t < stage.end_time; t += 60) {
        minuteData.push({ dateTime: DateTime.fromSeconds(t, { zone }).toFormat('HH:mm:ss'), value: stage.stage === 'awake' ? '3' : '1' });
      }
    }
    return {
      awakeCount: awake.length,
      awakeDuration: log.minutesAwake,
      awakeningsCount: awake.length,
      dateOfSleep: log.dateOfSleep,
      duration: log.duration,
      efficiency: log.efficiency,
      endTime: log.endTime,
      isMainSleep: log.isMainSleep,
      logId: log.logId,
      minuteData,
      minutesAfterWakeup: 0,
      minutesAsleep: log.minutesAsleep,
      minutesAwake: log.minutesAwake,
      minutesToFallAsleep: 0,
      restlessCount: 0,
      restlessDuration: 0,
      startTime: log.startTime,
      timeInBed: log.timeInBed,
    };
  });
  return {
    sleep: sleep.reverse(),
    summary: {
      totalMinutesAsleep: sleep.reduce((sum, log) => sum + log.minutesAsleep, 0),
      totalSleepRecords: sleep.length,
      totalTimeInBed: sleep.reduce((sum, log) => sum + log.timeInBed, 0),
    },
  };
}
