import type { FastifyInstance } from 'fastify';
import { rateLimitConfig } from '../http/rate-limit.js';

/**
 * RATE_LIMIT_API counts per grant (one user's authorization of one app), so one busy app cannot
 * starve the others. The bearer hook runs before the limiter, so `request.auth` is set.
 */
export function apiRateLimit(app: FastifyInstance): Record<string, unknown> {
  return rateLimitConfig(app.ctx.config.rateLimits.api, 'api', (request) => `grant:${request.auth.grantId}`);
}
