/**
 * The resource API (docs/api.md): one encapsulated plugin, so the bearer-token hook runs on these
 * routes only and never on the OAuth endpoints or the pages.
 */
import type { FastifyInstance } from 'fastify';
import { useApiSecurityHeaders } from '../http/security-headers.js';
import { bearerAuth } from './bearer.js';
import { SUM_METRICS } from '../domain/sum-metrics.js';
import { bodyWeightRoutes } from './body-weight.js';
import { heartRateRoutes } from './heart-rate.js';
import { sleepRoutes } from './sleep.js';
import { sumMetricRoutes } from './sum-metrics.js';
import { summaryRoutes } from './summary.js';
import { userRoutes } from './users.js';

export async function resourceRoutes(app: FastifyInstance): Promise<void> {
  useApiSecurityHeaders(app);
  await bearerAuth(app);
  await userRoutes(app);
  for (const definition of Object.values(SUM_METRICS)) await sumMetricRoutes(app, definition);
  await heartRateRoutes(app);
  await sleepRoutes(app);
  await bodyWeightRoutes(app);
  await summaryRoutes(app);
}
