/**
 * The resource API (docs/api.md): one encapsulated plugin, so the bearer-token hook runs on these
 * routes only and never on the OAuth endpoints or the pages.
 */
import type { FastifyInstance } from 'fastify';
import { useApiSecurityHeaders } from '../http/security-headers.js';
import { bearerAuth } from './bearer.js';
import { heartRateRoutes } from './heart-rate.js';
import { bodyWeightRoutes } from './body-weight.js';
import { sleepRoutes } from './sleep.js';
import { stepRoutes } from './steps.js';
import { userRoutes } from './users.js';

export async function resourceRoutes(app: FastifyInstance): Promise<void> {
  useApiSecurityHeaders(app);
  await bearerAuth(app);
  await userRoutes(app);
  await stepRoutes(app);
  await heartRateRoutes(app);
  await sleepRoutes(app);
  await bodyWeightRoutes(app);
}
