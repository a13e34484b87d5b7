/** What every Fitbit-compatible route declares for the OpenAPI document: its tag and its security. */
import type { RouteShorthandOptions } from 'fastify';
import { BEARER } from '../../http/schemas.js';

export const FITBIT_TAG = 'Fitbit compatible';
export const FITBIT_TAGS = [FITBIT_TAG];

export type FitbitRoute = RouteShorthandOptions & { schema: { tags: string[]; summary: string } };

/** A route of the face: its summary under the Fitbit tag, taking a bearer or DPoP token. */
export function fitbitRoute(summary: string): FitbitRoute {
  return { schema: { tags: FITBIT_TAGS, summary, security: BEARER } as FitbitRoute['schema'] };
}
