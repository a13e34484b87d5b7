/**
 * What every request handler and protocol function is given: the configuration, the database and
 * the clock, built once at start (src/server.ts) and hung on the Fastify instance (src/app.ts).
 */
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/database.js';

export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
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
