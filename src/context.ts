/**
 * What every request handler and protocol function is given: the configuration, the stores of the
 * database, the clock and the metrics, built once at start (src/app.ts) and hung on the Fastify instance.
 */
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics.js';
import type { Stores } from './store/stores.js';

export interface AppContext {
  config: Config;
  stores: Stores;
  clock: Clock;
  metrics: Metrics;
}

/** Secrets of the server, read from the database once at start (the same in every process). */
export interface ServerSecrets {
  /** Key of the sign-in and sign-up CSRF tokens (src/web/csrf.ts). */
  preSessionCsrf: () => Promise<Buffer>;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    serverSecrets: ServerSecrets;
  }
}
