import type { FastifyInstance } from 'fastify';
import { temporarilyUnavailable } from '../errors.js';
import { answer, errorAnswers } from './schemas.js';

const STATUS = (value: string) => ({ type: 'object', required: ['status'], additionalProperties: false, properties: { status: { type: 'string', enum: [value] } } });
const tags = ['Health'];

/**
 * `/healthz`: the process is up (a load balancer's liveness probe: never restart it for a database
 * outage). `/readyz`: it can reach its database; 503 `temporarily_unavailable` while it cannot, and
 * 200 again as soon as it can, with no restart (docs/operations.md).
 */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { schema: { tags, summary: 'The process is up', response: { 200: answer('The process answers', STATUS('ok')) } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags, summary: 'The database answers', response: { 200: answer('The database answers: send traffic here', STATUS('ready')), 503: errorAnswers()[503] } } }, async (_request, reply) => {
    if (await app.ctx.stores.isReachable()) return { status: 'ready' };
    const error = temporarilyUnavailable('the database is not reachable');
    return reply.code(503).headers(error.headers).send(error.toJSON());
  });
}
