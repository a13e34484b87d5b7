/**
 * The user resource of docs/api.md: the profile object an app sees, and the checks on a change to it.
 * A change is any subset of the editable fields; anything else is refused, naming the field.
 */
import { invalidRequest } from '../errors.js';
import type { Profile, ProfileChanges } from '../store/profiles.js';
import type { User } from '../store/users.js';
import { canonicalTimeZone } from './profile-time-zone.js';
import { DISPLAY_NAME_MAX_LENGTH, displayNameProblem } from './users.js';

export const DAILY_STEP_GOAL_MAX = 200_000;
/** A step is 30–250 cm for anyone from a small child walking to a sprinter. */
export const STRIDE_LENGTH_MIN_CM = 30;
export const STRIDE_LENGTH_MAX_CM = 250;
/** A birth year from 1900 to the current year (UTC). */
export const BIRTH_YEAR_MIN = 1900;
/** A maximum heart rate set by hand: from the lowest a frail old heart reaches to above any measured. */
export const MAX_HEART_RATE_MIN = 100;
export const MAX_HEART_RATE_MAX = 230;

/** Defined by the store that reads and writes them (src/store/users.ts). */
export type { Profile, ProfileChanges };

/** The profile as JSON, for the response serializer (every field, nothing else). */
export const PROFILE_JSON_SCHEMA = {
  type: 'object',
  required: ['id', 'display_name', 'timezone', 'daily_step_goal', 'stride_length_cm', 'birth_year', 'max_heart_rate', 'created_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    display_name: { type: 'string' },
    timezone: { type: 'string' },
    daily_step_goal: { type: 'integer' },
    stride_length_cm: { type: ['integer', 'null'] },
    birth_year: { type: ['integer', 'null'] },
    max_heart_rate: { type: ['integer', 'null'], description: 'beats per minute' },
    created_at: { type: 'integer' },
  },
} as const;

/** What `PUT /v1/users/me` accepts (parseProfileChanges enforces it, naming the field). */
export const PROFILE_CHANGES_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    display_name: { type: 'string', minLength: 1, maxLength: DISPLAY_NAME_MAX_LENGTH, description: 'trimmed; no control or bidirectional-override characters' },
    timezone: { type: 'string', description: 'an IANA time zone name such as Europe/Berlin' },
    daily_step_goal: { type: 'integer', minimum: 0, maximum: DAILY_STEP_GOAL_MAX },
    stride_length_cm: { type: ['integer', 'null'], minimum: STRIDE_LENGTH_MIN_CM, maximum: STRIDE_LENGTH_MAX_CM },
    birth_year: { type: ['integer', 'null'], minimum: BIRTH_YEAR_MIN, description: 'at most the current year; with no max_heart_rate, heart-rate zones count from 220 − age' },
    max_heart_rate: { type: ['integer', 'null'], minimum: MAX_HEART_RATE_MIN, maximum: MAX_HEART_RATE_MAX, description: 'beats per minute; heart-rate zones count from it when set' },
  },
} as const;

export const EDITABLE_FIELDS = ['display_name', 'timezone', 'daily_step_goal', 'stride_length_cm', 'birth_year', 'max_heart_rate'] as const satisfies ReadonlyArray<keyof ProfileChanges>;
export type EditableField = (typeof EDITABLE_FIELDS)[number];

export function profileOf(user: User): Profile {
  return {
    id: user.id,
    display_name: user.display_name,
    timezone: user.timezone,
    daily_step_goal: Number(user.daily_step_goal),
    stride_length_cm: user.stride_length_cm === null ? null : Number(user.stride_length_cm),
    birth_year: user.birth_year === null ? null : Number(user.birth_year),
    max_heart_rate: user.max_heart_rate === null ? null : Number(user.max_heart_rate),
    created_at: Number(user.created_at),
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function integerIn(field: EditableField, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw invalidRequest(`${field} must be an integer, got ${describe(value)}`);
  }
  if (value < min || value > max) throw invalidRequest(`${field} must be from ${min} to ${max}, got ${value}`);
  return value;
}

/** An optional integer field: null, or an integer from `min` to `max`. */
function nullableIntegerIn(field: EditableField, value: unknown, min: number, max: number): number | null {
  return value === null ? null : integerIn(field, value, min, max);
}

/**
 * Checks a PUT body (docs/api.md, `PUT /v1/users/me`) and returns the changes it asks for; `now`
 * (Unix seconds) bounds the birth year.
 */
export function parseProfileChanges(body: unknown, now: number): ProfileChanges {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest(`the body must be a JSON object with any of ${EDITABLE_FIELDS.join(', ')}`);
  }
  const input = body as Record<string, unknown>;
  const unknown = Object.keys(input).find((key) => !(EDITABLE_FIELDS as readonly string[]).includes(key));
  if (unknown !== undefined) {
    const readOnly = ['id', 'created_at'].includes(unknown);
    throw invalidRequest(
      readOnly
        ? `${unknown} cannot be changed`
        : `unknown field "${unknown.slice(0, 40)}"; the editable fields are ${EDITABLE_FIELDS.join(', ')}`,
    );
  }
  const changes: ProfileChanges = {};
  if ('display_name' in input) {
    const value = input.display_name;
    if (typeof value !== 'string') throw invalidRequest(`display_name must be a string, got ${describe(value)}`);
    const name = value.trim();
    const problem = displayNameProblem(name);
    if (problem !== null) throw invalidRequest(problem);
    changes.display_name = name;
  }
  if ('timezone' in input) {
    const value = input.timezone;
    const zone = typeof value === 'string' ? canonicalTimeZone(value) : null;
    if (zone === null) {
      throw invalidRequest(`timezone must be an IANA time zone name such as Europe/Berlin, got ${describe(value)}`);
    }
    changes.timezone = zone;
  }
  if ('daily_step_goal' in input) {
    changes.daily_step_goal = integerIn('daily_step_goal', input.daily_step_goal, 0, DAILY_STEP_GOAL_MAX);
  }
  if ('stride_length_cm' in input) {
    changes.stride_length_cm = nullableIntegerIn('stride_length_cm', input.stride_length_cm, STRIDE_LENGTH_MIN_CM, STRIDE_LENGTH_MAX_CM);
  }
  if ('birth_year' in input) {
    changes.birth_year = nullableIntegerIn('birth_year', input.birth_year, BIRTH_YEAR_MIN, new Date(now * 1000).getUTCFullYear());
  }
  if ('max_heart_rate' in input) {
    changes.max_heart_rate = nullableIntegerIn('max_heart_rate', input.max_heart_rate, MAX_HEART_RATE_MIN, MAX_HEART_RATE_MAX);
  }
  return changes;
}

/** The fields of `changes` that differ from `profile`: what a form that sends every field changed. */
export function changedFields(profile: Profile, changes: ProfileChanges): ProfileChanges {
  return Object.fromEntries(
    Object.entries(changes).filter(([field, value]) => value !== undefined && value !== profile[field as keyof ProfileChanges]),
  ) as ProfileChanges;
}
