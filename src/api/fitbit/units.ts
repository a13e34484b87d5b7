/**
 * Fitbit's units follow the request's `Accept-Language`: `en_US` answers miles and pounds, any
 * other value (or none) metric — kilometres and kilograms. (Fitbit's `en_GB` answers stone for
 * weight; Stride answers it metric, as docs/migrating-from-fitbit.md says.)
 */
import type { FastifyRequest } from 'fastify';

export interface Units {
  /** `en_US` for miles and pounds, `METRIC` otherwise: Fitbit's names for its unit systems. */
  system: 'en_US' | 'METRIC';
}

const METRES_PER_MILE = 1609.344;
const KG_PER_POUND = 0.45359237;

export function unitsOf(request: FastifyRequest): Units {
  const language = request.headers['accept-language'];
  return { system: typeof language === 'string' && /^\s*en[_-]US\b/i.test(language) ? 'en_US' : 'METRIC' };
}

/** Metres as the distance unit of `units`: kilometres or miles. */
export function distanceIn(units: Units, metres: number): number {
  return units.system === 'en_US' ? round(metres / METRES_PER_MILE, 6) : metres / 1000;
}

/** Kilograms as the weight unit of `units`: kilograms or pounds. */
export function weightIn(units: Units, kg: number): number {
  return units.system === 'en_US' ? round(kg / KG_PER_POUND, 2) : kg;
}

/** A weight sent in the unit of `units`, as kilograms (two decimals, as Stride keeps them). */
export function kilogramsFrom(units: Units, value: number): number {
  return round(units.system === 'en_US' ? value * KG_PER_POUND : value, 2);
}

/** A length in centimetres as the unit of `units`: centimetres or inches. */
export function lengthIn(units: Units, cm: number): number {
  return units.system === 'en_US' ? round(cm / 2.54, 1) : cm;
}

function round(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
