/**
 * The Prometheus metrics of one application (docs/operations.md, "Metrics"). Each application has
 * its own registry, so that several in one process (the tests) do not count into each other.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { SeriesHistogram } from './metric-series.js';

export type TokenEvent = 'issued' | 'refreshed' | 'replayed' | 'reuse_detected' | 'revoked';

export interface ConnectionCounts {
  total: number;
  idle: number;
  waiting: number;
}

export interface Metrics {
  registry: Registry;
  requests: SeriesHistogram<'method' | 'route' | 'status'>;
  rateLimited: Counter<'route'>;
  tokens: Counter<'event'>;
  signIns: Counter<'outcome'>;
  storeCalls: SeriesHistogram<'call'>;
  sweeps: Counter<'outcome'>;
  sweptRows: Counter<'table'>;
  webhookAttempts: Counter<'outcome'>;
}

let processMetrics: Registry | undefined;

/**
 * Process CPU, memory, file descriptors, GC and event-loop lag (nodejs_eventloop_lag_*): one set
 * per process, whatever the number of applications in it (their monitors run until it exits).
 */
function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** `connections` reads the database pool's use at each scrape (null: no pool, as on SQLite). */
export function createMetrics(connections: () => ConnectionCounts | null): Metrics {
  const own = new Registry();
  const registers = [own];
  new Gauge({
    name: 'stride_db_pool_connections',
    help: 'PostgreSQL pool connections by state (total, idle, waiting: queries waiting for one).',
    labelNames: ['state'],
    registers,
    collect() {
      const counts = connections();
      if (counts === null) return;
      for (const [state, value] of Object.entries(counts)) this.set({ state }, value);
    },
  });
  const metrics = {
    requests: new SeriesHistogram(
      'stride_http_request_duration_seconds',
      'HTTP requests by method, route template and status, with their latency.',
      ['method', 'route', 'status'],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    ),
    rateLimited: new Counter({ name: 'stride_rate_limited_total', help: 'Answers 429 rate_limited, by route template.', labelNames: ['route'], registers }),
    tokens: new Counter({
      name: 'stride_tokens_total',
      help: 'Token events: issued (code exchange), refreshed, replayed (within the replay window), reuse_detected (grant ended), revoked (RFC 7009).',
      labelNames: ['event'],
      registers,
    }),
    signIns: new Counter({ name: 'stride_sign_ins_total', help: 'Sign-in attempts by outcome (succeeded, failed).', labelNames: ['outcome'], registers }),
    storeCalls: new SeriesHistogram(
      'stride_store_call_duration_seconds',
      'Latency of each database operation (store call: one statement or one transaction).',
      ['call'],
      [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
      registers,
    ),
    sweeps: new Counter({ name: 'stride_sweeps_total', help: 'Sweeps of expired rows, by outcome (succeeded, failed).', labelNames: ['outcome'], registers }),
    webhookAttempts: new Counter({ name: 'stride_webhook_attempts_total', help: 'Webhook sends (deliveries and verifications), by outcome.', labelNames: ['outcome'], registers }),
    sweptRows: new Counter({ name: 'stride_swept_rows_total', help: 'Expired rows deleted by the sweeper, by table.', labelNames: ['table'], registers }),
  };
  return { registry: Registry.merge([processRegistry(), own]), ...metrics };
}
