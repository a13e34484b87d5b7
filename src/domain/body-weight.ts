/**
 * Body weight (docs/api.md, "Body weight"): what `POST /v1/users/me/body/weight/` accepts and how
 * a stored measurement is shown. The body schema decides the shape, types and ranges; what it
 * cannot say reliably — at most two decimals (JSON Schema's multipleOf 0.01 refuses 70.1, a
 * binary fraction away from a multiple) — and a time not in the future are checked by
 * weightProblem before anything is written. Values are stored in hundredths.
 */
import { MAX_TIMESTAMP } from './step-series.js';
import { tooFarAhead } from './future-times.js';
import type { StoredWeight, WeightInput } from '../store/body-weight.js';

export const MIN_KG = 20;
export const MAX_KG = 400;
export const MIN_FAT_PERCENT = 1;
export const MAX_FAT_PERCENT = 75;

/** The body of `POST /v1/users/me/body/weight/`; weightProblem checks what it cannot say. */
export const WEIGHT_BODY_JSON_SCHEMA = {
  type: 'object',
  required: ['time', 'kg'],
  additionalProperties: false,
  properties: {
    time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix seconds of the measurement, at most a day ahead of the server\'s clock; a measurement at the time of a stored one replaces it' },
    kg: { type: 'number', minimum: MIN_KG, maximum: MAX_KG, description: 'kilograms, at most two decimals' },
    fat_percent: { type: ['number', 'null'], minimum: MIN_FAT_PERCENT, maximum: MAX_FAT_PERCENT, description: 'body fat in percent, at most two decimals; absent or null: not measured' },
  },
} as const;

export const WEIGHT_JSON_SCHEMA = {
  type: 'object',
  required: ['id', 'time', 'kg', 'fat_percent'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'opaque; a replacement (same time) keeps it' },
    time: { type: 'integer' },
    kg: { type: 'number' },
    fat_percent: { type: ['number', 'null'], description: 'null when none was sent' },
  },
} as const;

export const WEIGHT_LIST_JSON_SCHEMA = {
  type: 'object',
  required: ['timezone', 'weight'],
  additionalProperties: false,
  properties: {
    timezone: { type: 'string' },
    weight: { type: 'array', items: WEIGHT_JSON_SCHEMA },
  },
} as const;

/** How `GET /v1/users/me/body/weight/` reads dates (domain/local-dates.ts). */
export const WEIGHT_DATE_RULES = { defaultDays: 30, maxDays: 1095 } as const;

export interface WeightBody {
  time: number;
  kg: number;
  fat_percent?: number | null;
}

export interface WeightView {
  id: string;
  time: number;
  kg: number;
  fat_percent: number | null;
}

/** True when `value` is written with at most two decimals (70.1, 70.15; not 70.155). */
function hasAtMostTwoDecimals(value: number): boolean {
  return Number(value.toFixed(2)) === value;
}

/** Why a measurement that passed the body schema cannot be stored, naming the field, or null; `at` names the measurement (`body/` for the route's body). */
export function weightProblem(body: WeightBody, now: number, at = 'body/'): string | null {
  const ahead = tooFarAhead(`${at}time`, body.time, now);
  if (ahead !== null) return ahead;
  if (!hasAtMostTwoDecimals(body.kg)) return `${at}kg must have at most two decimals, got ${body.kg}`;
  const fat = body.fat_percent;
  if (fat !== undefined && fat !== null && !hasAtMostTwoDecimals(fat)) return `${at}fat_percent must have at most two decimals, got ${fat}`;
  return null;
}

/** The measurement in stored units (hundredths). */
export function weightInput(body: WeightBody): WeightInput {
  const fat = body.fat_percent ?? null;
  return { time: body.time, kg_hundredths: Math.round(body.kg * 100), fat_hundredths: fat === null ? null : Math.round(fat * 100) };
}

export function weightView(weight: StoredWeight): WeightView {
  return {
    id: weight.id,
    time: weight.time,
    kg: weight.kg_hundredths / 100,
    fat_percent: weight.fat_hundredths === null ? null : weight.fat_hundredths / 100,
  };
}
