/**
 * Redis for tests: the shared one (TEST_REDIS_URL, default redis://127.0.0.1:6379) for tests that
 * only use it, and one of the test's own (a `redis-server` child process on a free port, nothing
 * saved) for tests that stop, freeze or restart it — never the shared one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './cli.js';
import { missing } from './dependencies.js';

export interface RedisServer {
  url: string;
  start(): Promise<void>;
  /** Kills the server (SIGKILL): connections drop at once. */
  stop(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open, and nothing answers on them. */
  freeze(): void;
  thaw(): void;
}

export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why the shared Redis cannot be used (nothing answers there), or null when it can; in CI, thrown. */
export async function sharedRedisUnavailable(): Promise<string | null> {
  // Five seconds: on a machine busy with the whole suite, a Redis that is there can take more than one.
  const client = new Redis(SHARED_REDIS_URL, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined); // nothing there: connect() rejects as well
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch {
    return missing(`no Redis answers at ${SHARED_REDIS_URL} (start redis-server, or set TEST_REDIS_URL)`);
  } finally {
    client.disconnect();
  }
}

/** Why no Redis of its own can be started here, or null when one can; in CI, thrown. */
export function redisServerUnavailable(): string | null {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? null : missing('redis-server is not installed (apt-get install redis-server)');
}

export async function createRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const client = new Redis(server.url, { lazyConnect: true, connectTimeout: 300, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on('error', () => undefined); // not listening yet: connect() rejects as well
        try {
          await client.connect();
          await client.ping();
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
        } finally {
          client.disconnect();
        }
      }
      throw new Error(`redis-server did not start on port ${port}`);
    },
    async stop() {
      const running = child;
      child = null;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGCONT');
      running.kill('SIGKILL');
      await exited;
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
  };
  await server.start();
  return server;
}
