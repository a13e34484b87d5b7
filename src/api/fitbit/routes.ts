/**
 * The Fitbit-compatible face (docs/migrating-from-fitbit.md): Fitbit Web API paths on the same
 * server and the same stores as `/v1/…`, so that an app written for Fitbit moves by changing its
 * base URL and credentials. One encapsulated plugin: its own error shape (errors.ts), its own rate
 * limit (rate-limit.ts), the resource API's token check (api/bearer.ts), and `{user-id}` checked
 * once for every route: `-` or the person's own id (Fitbit's `encodedId`); another is 403.
 */
import type { FastifyInstance } from 'fastify';
import { useApiSecurityHeaders } from '../../http/security-headers.js';
import { tokenKey } from '../../security/secrets.js';
import { bearerAuth } from '../bearer.js';
import { activityRoutes } from './activities.js';
import { bodyRoutes } from './body.js';
import { dailySummaryRoutes } from './daily-summary.js';
import { deviceRoutes } from './devices.js';
import { fitbitErrorHandler, FitbitError } from './errors.js';
import { profileRoutes } from './profile.js';
import { sleepRoutes } from './sleep.js';
import { subscriptionRoutes } from './subscriptions.js';
import { fitbitRateLimit } from './rate-limit.js';

export interface FitbitRouteOptions {
  /** True for an error of a database that cannot be reached or written for now (app.ts knows them). */
  isDatabaseUnavailable(error: unknown): boolean;
}

export async function fitbitRoutes(app: FastifyInstance, options: FitbitRouteOptions): Promise<void> {
  const { stores, clock } = app.ctx;
  useApiSecurityHeaders(app);
  app.setErrorHandler(
    fitbitErrorHandler({
      isExpired: async (token) => {
        const row = await stores.tokens.findAccess(tokenKey(token));
        return row !== undefined && Number(row.expires_at) <= clock();
      },
      isDatabaseUnavailable: options.isDatabaseUnavailable,
    }),
  );
  await bearerAuth(app);
  const limit = fitbitRateLimit(app);
  if (limit) app.addHook('onRequest', limit);
  app.addHook('onRequest', async (request) => {
    const { userId } = request.params as { userId?: string };
    if (userId !== undefined && userId !== '-' && userId !== request.auth.userId) {
      throw new FitbitError(403, 'insufficient_permissions', 'The caller is not authorized to view the requested data: use - or the id of the person who granted the token.', 'user-id');
    }
  });
  await profileRoutes(app);
  await activityRoutes(app);
  await dailySummaryRoutes(app);
  await sleepRoutes(app);
  await bodyRoutes(app);
  await deviceRoutes(app);
  await subscriptionRoutes(app);
}
