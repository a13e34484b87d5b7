import type { FastifyInstance } from 'fastify';
import { isReachable } from '../db/database.js';

/** `/healthz`: the process is up. `/readyz`: it can reach its database. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    if (await isReachable(app.ctx.db)) return { status: 'ready' };
    return reply.code(503).send({ error: 'server_error', error_description: 'the database is not reachable' });
  });
}
