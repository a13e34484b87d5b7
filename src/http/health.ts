import type { FastifyInstance } from 'fastify';
import { temporarilyUnavailable } from '../errors.js';

/**
 * `/healthz`: the process is up (a load balancer's liveness probe: never restart it for a database
 * outage). `/readyz`: it can reach its database; 503 `temporarily_unavailable` while it cannot, and
 * 200 again as soon as it can, with no restart (docs/operations.md).
 */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    if (await app.ctx.stores.isReachable()) return { status: 'ready' };
    const error = temporarilyUnavailable('the database is not reachable');
    return reply.code(error.status).headers(error.headers).send(error.toJSON());
  });
}
