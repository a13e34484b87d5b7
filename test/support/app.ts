/** A Stride app on a clean test database, driven with app.inject() or on a loopback port. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Dialect } from '../../src/db/database.js';
import { freePort } from './cli.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/** A clock tests can move: `clock.advance(3600)`. */
export interface TestClock {
  (): number;
  advance(seconds: number): void;
  set(seconds: number): void;
}

export function testClock(start = Math.floor(Date.now() / 1000)): TestClock {
  let now = start;
  const clock = (() => now) as TestClock;
  clock.advance = (seconds) => {
    now += seconds;
  };
  clock.set = (seconds) => {
    now = seconds;
  };
  return clock;
}

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  config: Config;
  clock: TestClock;
  close(): Promise<void>;
}

/** `env` overrides the environment the config is read from (e.g. ACCESS_TOKEN_TTL). */
export async function createTestApp(
  dialect: Dialect,
  env: Record<string, string> = {},
  /** Runs before the app is ready, e.g. to add a test-only route. */
  setup?: (app: FastifyInstance) => void | Promise<void>,
): Promise<TestApp> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT: 'off',
    PUBLIC_URL: 'http://stride.test',
    DATABASE_URL: database.url,
    ...env,
  });
  const clock = testClock();
  const app = await buildApp({ config, stores: database.stores, clock });
  await setup?.(app);
  await app.ready();
  return {
    app,
    database,
    config,
    clock,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** A Stride listening on a loopback port over `database` (the server a second-terminal command talks to). */
export interface ServedStride {
  url: string;
  /** Writes the app usage it counted (as the server's timer does). */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

/** Serves the test database `database` at http://127.0.0.1:PORT; `env` may set another PUBLIC_URL. */
export async function serveDatabase(database: TestDatabase, env: Record<string, string> = {}): Promise<ServedStride> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT: 'off', DATABASE_URL: database.url, PUBLIC_URL: url, ...env });
  const app = await buildApp({ config, stores: database.stores, clock: () => Math.floor(Date.now() / 1000) });
  await app.listen({ host: '127.0.0.1', port });
  return { url, flushUsage: () => app.usage.flush(), close: () => app.close() };
}
