/**
 * `GET /1/user/-/profile.json` (profile): the person's profile in Fitbit's shape, from the profile
 * the bearer check read. Fields Stride does not hold (date of birth, gender, height, weight,
 * avatar, locale, …) are left out (docs/migrating-from-fitbit.md lists them).
 */
import type { FastifyInstance } from 'fastify';
import { DateTime } from 'luxon';
import { profileZone } from '../../domain/local-dates.js';
import { strideInForce } from '../../store/profiles.js';
import { requireScope } from '../bearer.js';
import { described, fitbitRoute } from './route-schema.js';
import { lengthIn, unitsOf } from './units.js';

export async function profileRoutes(app: FastifyInstance): Promise<void> {
  const { clock } = app.ctx;
  const route = { ...fitbitRoute('The profile (Fitbit\'s profile)', { 200: described('The profile', { user: described('What Stride holds of Fitbit\'s profile', {}) }) }, []), onRequest: requireScope('read_profile') };
  app.get('/1/user/:userId/profile.json', route, (request) => {
    const { profile } = request.auth;
    const zone = profileZone(profile.timezone);
    const stride = lengthIn(unitsOf(request), strideInForce(profile.stride_length_cm));
    return {
      user: {
        encodedId: profile.id,
        displayName: profile.display_name,
        fullName: profile.display_name,
        timezone: zone,
        offsetFromUTCMillis: DateTime.fromSeconds(clock(), { zone }).offset * 60_000,
        memberSince: DateTime.fromSeconds(profile.created_at, { zone }).toISODate(),
        strideLengthWalking: stride,
        strideLengthRunning: stride,
        strideLengthWalkingType: profile.stride_length_cm === null ? 'default' : 'manual',
        strideLengthRunningType: profile.stride_length_cm === null ? 'default' : 'manual',
        // The units Stride keeps; answers follow the request's Accept-Language (units.ts).
        distanceUnit: 'METRIC',
        weightUnit: 'METRIC',
      },
    };
  });
}
