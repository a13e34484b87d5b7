/**
 * Configuration from environment variables (SPEC §1). Every variable is validated at start; a bad
 * value throws a ConfigError whose message is one line naming the variable.
 */

export interface RateLimit {
  /** Requests allowed per window. */
  max: number;
  /** Window length in milliseconds. */
  windowMs: number;
}

export interface Config {
  port: number;
  host: string;
  /** {base_url}: where the token endpoint, API and pages live. No trailing slash. */
  publicUrl: string;
  /** {auth_url}: where the authorization dialog lives. No trailing slash. */
  authUrl: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  authCodeTtl: number;
  refreshReplayWindow: number;
  sessionTtl: number;
  /** Seconds between sweeps of expired codes, tokens and sessions. */
  sweepInterval: number;
  logLevel: string;
  rateLimits: {
    login: RateLimit | null;
    token: RateLimit | null;
    api: RateLimit | null;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  }
  const value = Number(raw.trim());
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.search || parsed.hash) {
    throw new ConfigError(`${name} must not have a query or fragment, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return 'sqlite:./data/stride.sqlite';
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return raw;
  if (/^postgres(ql)?:\/\/.+/.test(raw)) return raw;
  throw new ConfigError(
    `DATABASE_URL must be sqlite:PATH, sqlite::memory: or postgres://…, got "${raw}"`,
  );
}

const WINDOW_UNITS: Record<string, number> = {
  s: 1000, sec: 1000, second: 1000,
  m: 60_000, min: 60_000, minute: 60_000,
  h: 3_600_000, hour: 3_600_000,
};

/** Parses a rate like `10/min`, `300/s` or `1000/hour`. */
export function parseRateLimit(name: string, raw: string): RateLimit {
  const match = /^\s*(\d+)\s*\/\s*(\d*)\s*([a-z]+)\s*$/.exec(raw);
  const unit = match ? WINDOW_UNITS[match[3]!] : undefined;
  if (!match || unit === undefined || Number(match[1]) < 1) {
    throw new ConfigError(`${name} must look like 10/min (units: s, min, hour), got "${raw}"`);
  }
  const multiplier = match[2] ? Number(match[2]) : 1;
  return { max: Number(match[1]), windowMs: unit * Math.max(multiplier, 1) };
}

function rateLimit(env: Env, name: string, fallback: string, off: boolean): RateLimit | null {
  const raw = env[name];
  if (raw === 'off') return null;
  const parsed = parseRateLimit(name, raw === undefined || raw === '' ? fallback : raw);
  return off ? null : parsed;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST && env.HOST !== '' ? env.HOST : 'localhost';
  const publicUrl = url(env, 'PUBLIC_URL', `http://localhost:${port}`);
  const authUrl = url(env, 'AUTH_URL', publicUrl);

  const rateLimitSwitch = env.RATE_LIMIT;
  if (rateLimitSwitch !== undefined && rateLimitSwitch !== '' && !['on', 'off'].includes(rateLimitSwitch)) {
    throw new ConfigError(`RATE_LIMIT must be "on" or "off", got "${rateLimitSwitch}"`);
  }
  const off = rateLimitSwitch === 'off';

  const logLevel = env.LOG_LEVEL && env.LOG_LEVEL !== '' ? env.LOG_LEVEL : 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const redisUrl = env.REDIS_URL && env.REDIS_URL !== '' ? env.REDIS_URL : undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) {
    throw new ConfigError(`REDIS_URL must be redis://HOST:PORT, got "${redisUrl}"`);
  }

  return {
    port,
    host,
    publicUrl,
    authUrl,
    databaseUrl: databaseUrl(env),
    redisUrl,
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 2_592_000, 1, 10 * 365 * 86400),
    refreshTokenTtl: integer(env, 'REFRESH_TOKEN_TTL', 365 * 86400, 1, 10 * 365 * 86400),
    // RFC 6749 §4.1.2 recommends at most 10 minutes for authorization codes.
    authCodeTtl: integer(env, 'AUTH_CODE_TTL', 600, 1, 600),
    refreshReplayWindow: integer(env, 'REFRESH_REPLAY_WINDOW', 30, 0, 3600),
    sessionTtl: integer(env, 'SESSION_TTL', 14 * 86400, 60, 365 * 86400),
    sweepInterval: integer(env, 'SWEEP_INTERVAL', 600, 1, 86400),
    logLevel,
    rateLimits: {
      login: rateLimit(env, 'RATE_LIMIT_LOGIN', '10/min', off),
      token: rateLimit(env, 'RATE_LIMIT_TOKEN', '600/min', off),
      api: rateLimit(env, 'RATE_LIMIT_API', '6000/min', off),
    },
  };
}
