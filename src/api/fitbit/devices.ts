/**
 * `GET /1/user/-/devices.json`: the apps that write the person's data (those whose grant holds a
 * write scope), each as a tracker with its `lastSyncTime` — when the app last used its grant, to
 * the minute, in the person's local time. Fitbit apps poll it to learn that a tracker synced; Stride
 * does not record which app wrote which minute, nor batteries or MAC addresses.
 */
import type { FastifyInstance } from 'fastify';
import { DateTime } from 'luxon';
import { profileZone } from '../../domain/local-dates.js';
import { FitbitError } from './errors.js';
import { described, fitbitRoute } from './route-schema.js';

export async function deviceRoutes(app: FastifyInstance): Promise<void> {
  const { stores } = app.ctx;
  app.get('/1/user/:userId/devices.json', fitbitRoute('The apps that write the person\'s data, as trackers (Fitbit\'s devices; any read scope)', { 200: { description: 'One tracker per app that writes the person\'s data', type: 'array', items: described('A tracker', {}) } }, []), async (request) => {
    // Fitbit's `settings` scope grants nothing here; any scope that reads data will do.
    if (!request.auth.scopes.some((scope) => scope.startsWith('read_'))) {
      throw new FitbitError(403, 'insufficient_scope', 'This application needs a scope that reads data to list the person\'s devices.');
    }
    const zone = profileZone(request.auth.profile.timezone);
    const apps = await stores.grants.listConnectedApps(request.auth.userId);
    return apps
      .filter((connected) => connected.scopes.some((scope) => scope.startsWith('write_')))
      .map((connected) => ({
        deviceVersion: connected.name,
        features: [],
        id: connected.clientId,
        lastSyncTime: connected.lastUsedAt === null ? null : DateTime.fromSeconds(connected.lastUsedAt, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS"),
        type: 'TRACKER',
      }));
  });
}
