/**
 * Sleep sessions (docs/api.md, "Sleep"): what `POST /v1/users/me/sleep/` accepts and how a stored
 * session is shown. The body schema decides the shape, the types and the ranges; sessionProblem
 * checks what a schema cannot say — the order of times, stages contiguous and covering the session
 * exactly, at most 24 hours, not in the future — before anything is written.
 */
import { MAX_TIMESTAMP } from './step-series.js';
import { tooFarAhead } from './future-times.js';
import { localDateOf } from './local-dates.js';
import { MAX_SLEEP_SESSION_SECONDS, SLEEP_STAGE_CODES, type SleepSessionInput, type StoredSleepSession } from '../store/sleep.js';

/** A stage every 30 seconds for 24 hours: more than any device scores. */
export const MAX_STAGES = 2880;

const TIME = { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP } as const;

const STAGE_JSON_SCHEMA = {
  type: 'object',
  required: ['stage', 'start_time', 'end_time'],
  additionalProperties: false,
  properties: {
    stage: { type: 'string', enum: SLEEP_STAGE_CODES },
    start_time: { ...TIME, description: 'Unix seconds; the previous stage\'s end_time (the session\'s start_time for the first)' },
    end_time: { ...TIME, description: 'Unix seconds, after start_time' },
  },
} as const;

/** The body of `POST /v1/users/me/sleep/`; sessionProblem checks what it cannot say. */
export const SLEEP_SESSION_BODY_JSON_SCHEMA = {
  type: 'object',
  required: ['start_time', 'end_time', 'stages'],
  additionalProperties: false,
  properties: {
    start_time: { ...TIME, description: 'Unix seconds (any second); a session with the start_time of a stored one replaces it' },
    end_time: { ...TIME, description: 'Unix seconds, after start_time, at most 24 hours after it and at most a day ahead of the server\'s clock' },
    stages: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_STAGES,
      description: 'contiguous, in order, covering [start_time, end_time) exactly',
      items: STAGE_JSON_SCHEMA,
    },
  },
} as const;

/** A session as the API shows it. */
export const SLEEP_SESSION_JSON_SCHEMA = {
  type: 'object',
  required: ['id', 'date', 'start_time', 'end_time', 'minutes_asleep', 'minutes_awake', 'stages'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'opaque; a replacement (same start_time) keeps it' },
    date: { type: 'string', description: 'YYYY-MM-DD: the local date of end_time' },
    start_time: { type: 'integer' },
    end_time: { type: 'integer' },
    minutes_asleep: { type: 'integer', description: 'light, deep and rem, rounded to whole minutes' },
    minutes_awake: { type: 'integer', description: 'awake, rounded to whole minutes' },
    stages: { type: 'array', items: STAGE_JSON_SCHEMA },
  },
} as const;

export const SLEEP_LIST_JSON_SCHEMA = {
  type: 'object',
  required: ['timezone', 'sleep'],
  additionalProperties: false,
  properties: {
    timezone: { type: 'string' },
    sleep: { type: 'array', items: SLEEP_SESSION_JSON_SCHEMA },
  },
} as const;

/** How `GET /v1/users/me/sleep/` reads dates (domain/local-dates.ts). */
export const SLEEP_DATE_RULES = { defaultDays: 7, maxDays: 100 } as const;

export interface SleepSessionView extends StoredSleepSession {
  date: string;
  minutes_asleep: number;
  minutes_awake: number;
}

/**
 * Why a session that passed the body schema cannot be stored, naming the field, or null.
 * `now` is the server's clock; `at` names the session (`body/` for the route's body).
 */
export function sessionProblem(session: SleepSessionInput, now: number, at = 'body/'): string | null {
  const { start_time: start, end_time: end, stages } = session;
  if (end <= start) return `${at}end_time ${end} must be after ${at}start_time ${start}`;
  if (end - start > MAX_SLEEP_SESSION_SECONDS) return `${at}end_time is ${end - start} seconds after ${at}start_time; a session lasts at most 24 hours (86400 seconds)`;
  const ahead = tooFarAhead(`${at}end_time`, end, now);
  if (ahead !== null) return ahead;
  let expected = start;
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i]!;
    if (stage.start_time !== expected) {
      return i === 0
        ? `${at}stages/0/start_time ${stage.start_time} must equal ${at}start_time ${start}: the stages cover the session exactly`
        : `${at}stages/${i}/start_time ${stage.start_time} must equal ${at}stages/${i - 1}/end_time ${expected}: stages are contiguous`;
    }
    if (stage.end_time <= stage.start_time) return `${at}stages/${i}/end_time ${stage.end_time} must be after its start_time ${stage.start_time}`;
    expected = stage.end_time;
  }
  if (expected !== end) return `${at}stages/${stages.length - 1}/end_time ${expected} must equal ${at}end_time ${end}: the stages cover the session exactly`;
  return null;
}

/** Seconds asleep (light, deep, rem) and awake of a session. */
function secondsByState(session: SleepSessionInput): { asleep: number; awake: number } {
  let asleep = 0;
  let awake = 0;
  for (const stage of session.stages) {
    const seconds = stage.end_time - stage.start_time;
    if (stage.stage === 'awake') awake += seconds;
    else asleep += seconds;
  }
  return { asleep, awake };
}

/** A session's minutes asleep as the API shows them: light, deep and rem, rounded to whole minutes. */
export function asleepMinutes(session: SleepSessionInput): number {
  return minutesShown(secondsByState(session).asleep);
}

/** Seconds of a session as the API shows them: whole minutes, rounded. */
export function minutesShown(seconds: number): number {
  return Math.round(seconds / 60);
}

/** A stored session as the API shows it, its date in `zone`. */
export function sessionView(session: StoredSleepSession, zone: string): SleepSessionView {
  const { asleep, awake } = secondsByState(session);
  return {
    id: session.id,
    date: localDateOf(session.end_time, zone),
    start_time: session.start_time,
    end_time: session.end_time,
    minutes_asleep: minutesShown(asleep),
    minutes_awake: minutesShown(awake),
    stages: session.stages,
  };
}
