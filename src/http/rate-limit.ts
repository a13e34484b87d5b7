/**
 * Rate limiting (SPEC §1, §6) with @fastify/rate-limit, shared by every face of Stride. Counters
 * live in Redis when REDIS_URL is set (so every process shares them), else in process memory.
 * If Redis is unreachable, limits are skipped until it is back (fail open, logged).
 * Nothing is limited by default: a route opts in with `config: rateLimitConfig(limit)`. An
 * exceeded limit is a 429 `rate_limited` with Retry-After (mapped by the error handler of app.ts).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { RateLimit } from '../config.js';

export async function registerRateLimiting(app: FastifyInstance): Promise<void> {
  const { redisUrl, rateLimits } = app.ctx.config;
  // With every limit off (RATE_LIMIT=off) no route asks for one: the plugin and its per-request
  // bookkeeping stay out, and no Redis connection is opened.
  if (Object.values(rateLimits).every((limit) => limit === null)) return;
  // Commands fail at once while Redis is unreachable (no offline queue) instead of holding requests,
  // and after a second when it is connected but does not answer (a frozen or overloaded server).
  const redis = redisUrl
    ? new Redis(redisUrl, { connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : undefined;
  if (redis) {
    redis.on('error', (error: unknown) => app.log.warn({ err: error }, 'rate-limit store (Redis) error'));
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect());
    });
  }
  await app.register(rateLimit, {
    global: false,
    // When the shared counter store cannot be reached, requests go through unlimited (and each
    // failure is logged) rather than every sign-in and token request failing with a 500: Argon2id
    // still makes password guessing slow, and the outage is visible in the logs.
    skipOnError: true,
    ...(redis ? { redis, nameSpace: 'stride-rate-limit:' } : { store: SharedMemoryStore }),
  });
}

interface Window {
  current: number;
  ttl: number;
  startedAt: number;
}

/**
 * The in-process counter store. The plugin's own memory store keeps one map per route, so routes
 * sharing a `groupId` (login and sign-up; the API's routes) would each get the full allowance;
 * this one keeps a single fixed-window map for every route, as the Redis store does.
 */
class SharedMemoryStore {
  private readonly windows = new Map<string, Window>();

  // The plugin calls incr(key, callback, timeWindow, max); its type declaration omits the last two.
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow = 60_000): void {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.startedAt + timeWindow <= now) {
      if (this.windows.size >= 100_000) this.dropExpired(now, timeWindow);
      window = { current: 0, ttl: timeWindow, startedAt: now };
      this.windows.set(key, window);
    }
    window.current += 1;
    window.ttl = window.startedAt + timeWindow - now;
    callback(null, { current: window.current, ttl: window.ttl });
  }

  child(): SharedMemoryStore {
    return this;
  }

  private dropExpired(now: number, timeWindow: number): void {
    for (const [key, window] of this.windows) {
      if (window.startedAt + timeWindow <= now) this.windows.delete(key);
    }
  }
}

/**
 * The route `config` that applies `limit` (null: unlimited, e.g. RATE_LIMIT=off). `group` makes
 * several routes share one counter; the counter is per client address unless `keyOf` says what
 * else to count by.
 */
export function rateLimitConfig(
  limit: RateLimit | null,
  group?: string,
  keyOf?: (request: FastifyRequest) => string,
): Record<string, unknown> {
  if (limit === null) return {};
  return {
    rateLimit: {
      max: limit.max,
      timeWindow: limit.windowMs,
      ...(group && { groupId: group }),
      ...(keyOf && { keyGenerator: keyOf }),
    },
  };
}
