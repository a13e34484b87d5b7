/**
 * `/metrics` in Prometheus's text format (docs/operations.md, "Metrics"): on the public port only
 * behind METRICS_TOKEN, or alone on a loopback METRICS_PORT; neither set, it is not served.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { ApiError } from '../errors.js';
import type { Observe } from '../metric-series.js';
import type { Metrics } from '../metrics.js';
import { constantTimeEqual } from '../security/secrets.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** Every answer into the request histogram, by route template (never the raw path: one series per route). */
export function observeRequests(app: FastifyInstance, metrics: Metrics): void {
  // The series of each method, status and route, found by one lookup (bounded: route templates).
  const series = new Map<string, Observe>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const method = METHODS.has(request.method) ? request.method : 'other';
    const status = reply.statusCode;
    const key = `${method} ${status} ${route}`;
    let observe = series.get(key);
    if (observe === undefined) {
      observe = metrics.requests.observer({ method, route, status });
      series.set(key, observe);
    }
    observe(reply.elapsedTime / 1000);
    if (reply.statusCode === 429) metrics.rateLimited.inc({ route });
    done();
  });
}

export function metricsRoute(app: FastifyInstance, registry: Registry, token: string): void {
  app.get('/metrics', async (request, reply) => {
    const sent = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (sent === undefined || !constantTimeEqual(sent, token)) {
      throw new ApiError('invalid_token', 'the metrics need Authorization: Bearer METRICS_TOKEN', {
        'www-authenticate': 'Bearer realm="metrics"',
      });
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** The metrics alone on their own port (bound to loopback by the caller's host). */
export async function serveMetrics(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found; the metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return server;
}
