/**
 * Rate limiting (docs/oauth.md, "Rate limits") with @fastify/rate-limit, shared by every face of
 * Stride. Counters live in Redis when REDIS_URL is set (so every process shares them), else in
 * process memory. If Redis is unreachable, limits are skipped until it is back (fail open, logged).
 * Nothing is limited by default: a route opts in with `config: rateLimitConfig(limit, group)`, or
 * counts with keyedRateLimit() under a key it names (what the body says, the signed-in account). An
 * exceeded limit is a 429 `rate_limited` with Retry-After (mapped by the error handler of app.ts).
 */
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { RateLimit } from '../config.js';
import { ApiError } from '../errors.js';
import { addressKey } from './address-key.js';

/** How long start-up waits for Redis before serving without it (its connect timeout). */
const REDIS_READY_WAIT_MS = 2000;

export async function registerRateLimiting(app: FastifyInstance): Promise<void> {
  const { redisUrl, rateLimits } = app.ctx.config;
  // With every limit off (RATE_LIMIT=off) no route asks for one: the plugin and its per-request
  // bookkeeping stay out, and no Redis connection is opened.
  if (Object.values(rateLimits).every((limit) => limit === null)) return;
  // Commands fail at once while Redis is unreachable (no offline queue) instead of holding requests,
  // and after a second when it is connected but does not answer (a frozen or overloaded server).
  // ioredis is loaded only when there is a Redis to talk to.
  const redis = redisUrl
    ? new (await import('ioredis')).Redis(redisUrl, { connectTimeout: REDIS_READY_WAIT_MS, commandTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : undefined;
  if (redis) {
    redis.on('error', (error: unknown) => app.log.warn({ err: error }, 'rate-limit store (Redis) error'));
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect());
    });
    // The first requests are counted too: wait for the connection (as long as connecting may take)
    // before serving, and serve anyway, failing open, if Redis is not there by then.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, REDIS_READY_WAIT_MS);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  const counters: Counters = redis ? redisCounters(redis) : new SharedMemoryStore();
  app.decorate('rateCounters', counters);
  await app.register(rateLimit, {
    global: false,
    // When the shared counter store cannot be reached, requests go through unlimited (and each
    // failure is logged) rather than every sign-in and token request failing with a 500: Argon2id
    // still makes password guessing slow, and the outage is visible in the logs.
    skipOnError: true,
    // The plugin makes the store; each of its stores is this one set of counters.
    store: class {
      incr(key: string, callback: IncrCallback, timeWindow?: number) {
        counters.incr(key, callback, timeWindow);
      }

      child() {
        return this;
      }
    },
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The counters behind every limit (Redis, or this process's memory); absent with RATE_LIMIT=off. */
    rateCounters?: Counters;
  }
}

/** The counters of every limit: counted (the plugin's store interface), or only looked at. */
interface Counters {
  incr(key: string, callback: IncrCallback, timeWindow?: number): void;
  /** The count in `key`'s window now, and the milliseconds until the window ends (0 and 0: none). */
  peek(key: string): Promise<{ current: number; ttl: number }>;
}

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** One fixed window per key: the first hit sets its expiry (atomic, one round trip). */
const INCREMENT_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {current, redis.call('PTTL', KEYS[1])}`;

/**
 * The Redis counter store. The plugin's own Redis store prefixes each route's keys with its method
 * and URL, so routes sharing a group (sign-in and sign-up) would count apart; this one keys by
 * group and client only, like SharedMemoryStore below.
 */
function redisCounters(redis: Redis): Counters {
  redis.defineCommand('strideRateLimit', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  const increment = (redis as Redis & { strideRateLimit(key: string, windowMs: number): Promise<[number, number]> }).strideRateLimit.bind(redis);
  return {
    incr(key, callback, timeWindow = 60_000) {
      increment(`stride-rate-limit:${key}`, timeWindow).then(
        ([current, ttl]) => callback(null, { current, ttl }),
        (error: Error) => callback(error),
      );
    },
    async peek(key) {
      const [[, current], [, ttl]] = (await redis.multi().get(`stride-rate-limit:${key}`).pttl(`stride-rate-limit:${key}`).exec()) as [[null, string | null], [null, number]];
      return current === null ? { current: 0, ttl: 0 } : { current: Number(current), ttl: Math.max(0, ttl) };
    },
  };
}

interface Window {
  current: number;
  ttl: number;
  startedAt: number;
  /** When this window ends: its own length, since limits of different windows share the map. */
  endsAt: number;
}

/**
 * The in-process counter store. The plugin's own memory store keeps one map per route, so routes
 * sharing a `groupId` (login and sign-up; the API's routes) would each get the full allowance;
 * this one keeps a single fixed-window map for every route, as the Redis store does.
 */
class SharedMemoryStore {
  private readonly windows = new Map<string, Window>();

  // The plugin calls incr(key, callback, timeWindow, max); its type declaration omits the last two.
  incr(key: string, callback: IncrCallback, timeWindow = 60_000): void {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.startedAt + timeWindow <= now) {
      if (this.windows.size >= 100_000) this.dropExpired(now);
      window = { current: 0, ttl: timeWindow, startedAt: now, endsAt: now + timeWindow };
      this.windows.set(key, window);
    }
    window.current += 1;
    window.ttl = window.startedAt + timeWindow - now;
    callback(null, { current: window.current, ttl: window.ttl });
  }

  async peek(key: string): Promise<{ current: number; ttl: number }> {
    const window = this.windows.get(key);
    const left = window ? window.endsAt - Date.now() : 0;
    return window && left > 0 ? { current: window.current, ttl: left } : { current: 0, ttl: 0 };
  }

  private dropExpired(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.endsAt <= now) this.windows.delete(key);
    }
  }
}

/**
 * The route `config` that applies `limit` (null: unlimited, e.g. RATE_LIMIT=off). Routes of one
 * `group` share one counter; the counter is per client address (request.ip, see TRUST_PROXY; an
 * IPv6 client by its /64: address-key.ts) unless `keyOf` says what else to count by.
 */
export function rateLimitConfig(
  limit: RateLimit | null,
  group: string,
  keyOf: (request: FastifyRequest) => string = (request) => addressKey(request.ip),
): Record<string, unknown> {
  if (limit === null) return {};
  return {
    rateLimit: {
      max: limit.max,
      timeWindow: limit.windowMs,
      keyGenerator: (request: FastifyRequest) => `${group}:${keyOf(request)}`,
    },
  };
}

/** What one counted attempt left of its limit. */
export interface Spent {
  /** This attempt is beyond the limit. */
  exceeded: boolean;
  /** Attempts still allowed in the window after this one (all of them while the store is away). */
  remaining: number;
  retryAfterSeconds: number;
}

/**
 * A counter of `limit` under keys the caller names: the signed-in account, the email a sign-in
 * form names, a device cookie — what a route `config` limit cannot key by, since it runs before
 * the body is read and the session is known. Each call counts one attempt. Keys are hashed: the
 * counter store never holds what a person typed. Null when unlimited.
 */
export function keyedRateLimit(
  app: FastifyInstance,
  limit: RateLimit | null,
  group: string,
): ((request: FastifyRequest, key: string) => Promise<Spent>) | null {
  if (limit === null) return null;
  // The plugin asks the request for its key; each call names it first. A request is counted at
  // most once per counter, so one entry per request is enough.
  const keys = new WeakMap<FastifyRequest, string>();
  const count = app.createRateLimit({ max: limit.max, timeWindow: limit.windowMs, keyGenerator: (request) => keys.get(request)! });
  return async (request, key) => {
    keys.set(request, `${group}:${createHash('sha256').update(key).digest('base64url')}`);
    const result = await count(request);
    // isAllowed is true only for an allow-list, which Stride does not use.
    if (result.isAllowed) return { exceeded: false, remaining: limit.max, retryAfterSeconds: 0 };
    return { exceeded: result.isExceeded, remaining: result.remaining, retryAfterSeconds: result.ttlInSeconds };
  };
}

/** The 429 `rate_limited` (with Retry-After) of an attempt beyond its limit; `description` says which. */
export function refuseWhenExceeded(spent: Spent, description: string): void {
  if (!spent.exceeded) return;
  throw new ApiError('rate_limited', `${description}; retry in ${spent.retryAfterSeconds} s`, {
    'retry-after': String(spent.retryAfterSeconds),
  });
}

/**
 * A limit on failures only (the sign-in forms: RATE_LIMIT_LOGIN_ACCOUNT): an attempt first asks
 * whether its key's failures have spent the limit, and only an attempt that fails is counted, so
 * people who know their password never spend it. Keys are hashed as keyedRateLimit's are. Null when
 * unlimited. While the counters cannot be reached, nothing is refused (as the other limits).
 */
export interface FailureLimit {
  /** Throws 429 `rate_limited` (with Retry-After) while `key`'s failures have spent the limit. */
  refuseWhenSpent(request: FastifyRequest, key: string, description: string): Promise<void>;
  /** Counts a failed attempt of `key`. */
  countFailure(request: FastifyRequest, key: string): Promise<void>;
}

export function failureLimit(app: FastifyInstance, limit: RateLimit | null, group: string): FailureLimit | null {
  const counters = app.rateCounters;
  if (limit === null || counters === undefined) return null;
  const keyOf = (key: string) => `${group}:${createHash('sha256').update(key).digest('base64url')}`;
  return {
    async refuseWhenSpent(request, key, description) {
      let spent: { current: number; ttl: number };
      try {
        spent = await counters.peek(keyOf(key));
      } catch (error) {
        request.log.warn({ err: error }, 'rate-limit store unreachable; the failure limit is skipped');
        return;
      }
      if (spent.current < limit.max) return;
      const seconds = Math.max(1, Math.ceil(spent.ttl / 1000));
      throw new ApiError('rate_limited', `${description}; retry in ${seconds} s`, { 'retry-after': String(seconds) });
    },
    async countFailure(request, key) {
      await new Promise<void>((resolve) =>
        counters.incr(keyOf(key), (error) => {
          if (error) request.log.warn({ err: error }, 'rate-limit store unreachable; a failure was not counted');
          resolve();
        }, limit.windowMs),
      );
    },
  };
}
