/**
 * Configuration from environment variables (README, "Configuration"). Every variable is validated
 * at start; a bad value throws a ConfigError whose message is one line naming the variable.
 */
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

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
  /** A transaction-pooling proxy (PgBouncer) sits between Stride and PostgreSQL. */
  databaseTransactionPooling: boolean;
  /** A streaming replica of the PostgreSQL primary, for step series reads. */
  databaseReplicaUrl: string | undefined;
  redisUrl: string | undefined;
  /** DPOP_NONCE=true: every DPoP proof must carry a server-provided nonce (RFC 9449 §8). */
  dpopNonce: boolean;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  authCodeTtl: number;
  refreshReplayWindow: number;
  sessionTtl: number;
  /** Seconds a device waits between polls of the token endpoint, at least (RFC 8628 §3.2 `interval`). */
  devicePollInterval: number;
  /** Seconds between sweeps of expired codes, tokens and sessions. */
  sweepInterval: number;
  logLevel: string;
  rateLimits: {
    login: RateLimit | null;
    /** Sign-in attempts per email address, whatever address they come from. */
    loginAccount: RateLimit | null;
    /** Password checks on the account pages per account, whatever session or address they come from. */
    passwordCheck: RateLimit | null;
    /** User codes looked up at /device, from every address together (RFC 8628 §5.1). */
    deviceCodes: RateLimit | null;
    /** Clients registered through RFC 7591 per client address. */
    registration: RateLimit | null;
    token: RateLimit | null;
    api: RateLimit | null;
    /** FITBIT_RATE_LIMIT: the Fitbit-compatible routes, per person and app per clock hour. */
    fitbit: RateLimit | null;
  };
  /** Fastify's `trustProxy`: which peers' X-Forwarded-For is believed (false: none). */
  trustProxy: TrustProxy;
  http: HttpLimits;
  webhooks: WebhookSettings;
  /** How /metrics is reached: with this bearer token on the public port, or on this loopback port. */
  metrics: { token: string | undefined; port: number | undefined };
  registration: RegistrationSettings;
  sandbox: SandboxConfig;
  takeout: TakeoutConfig;
  /** SMTP_URL and SMTP_FROM: where "Forgot your password?" mails are sent through; undefined: Stride sends no email. */
  smtp: SmtpConfig | undefined;
}

/** Outgoing email (docs/configuration.md, "Email"). */
export interface SmtpConfig {
  /** smtp://user:pass@host:587 (STARTTLS when the server offers it) or smtps://…:465 (TLS from the start). */
  url: string;
  /** The sender, e.g. `Stride <stride@example.com>`. */
  from: string;
}

/** Imports of Google Takeout archives (docs/takeout.md). */
export interface TakeoutConfig {
  /** TAKEOUT_MAX_BYTES: the largest archive read; a larger one is refused before it is opened. */
  maxArchiveBytes: number;
  /** TAKEOUT_LEASE: seconds a process running an import may go silent before another takes the import over. */
  leaseSeconds: number;
  /** TAKEOUT_DIR: where archives uploaded on the account page are stored while they are previewed and imported. */
  archiveDir: string;
  /** TAKEOUT_UNCONFIRMED_KEPT: seconds an uploaded archive waits for the person's confirmation before the sweep removes it. */
  unconfirmedKeptSeconds: number;
}

/** Test people (docs/web.md, "Test people"). */
export interface SandboxConfig {
  /** The sandbox clock: test people of developers with webhook endpoints are synced every few minutes. */
  live: boolean;
  /** Days of data a new test person gets. */
  days: number;
}

/** Dynamic client registration (RFC 7591/7592; docs/oauth.md). */
export interface RegistrationSettings {
  /** off: no registration endpoint; token: an initial access token is required; open: anyone. */
  mode: 'off' | 'token' | 'open';
  /** The email of the account that owns registered apps (its dashboard lists them). */
  owner: string | undefined;
}

const REGISTRATION_MODES = ['off', 'token', 'open'] as const;

function registrationSettings(env: Env): RegistrationSettings {
  const mode = env.REGISTRATION === undefined || env.REGISTRATION === '' ? 'off' : env.REGISTRATION;
  if (!(REGISTRATION_MODES as readonly string[]).includes(mode)) {
    throw new ConfigError(`REGISTRATION must be one of ${REGISTRATION_MODES.join(', ')}, got "${mode}"`);
  }
  const owner = env.REGISTRATION_OWNER === undefined || env.REGISTRATION_OWNER === '' ? undefined : env.REGISTRATION_OWNER.trim().toLowerCase();
  if (mode !== 'off' && owner === undefined) throw new ConfigError(`REGISTRATION=${mode} needs REGISTRATION_OWNER, the email of the account that owns registered apps`);
  if (owner !== undefined && !/^[^\s@]+@[^\s@]+$/.test(owner)) throw new ConfigError(`REGISTRATION_OWNER must be an email address, got "${owner}"`);
  return { mode: mode as RegistrationSettings['mode'], owner };
}

/** Events and their delivery (docs/webhooks.md). */
export interface WebhookSettings {
  /** steps.updated is sent at most once per user and endpoint in this many seconds. */
  coalesceSeconds: number;
  /** A message is retried for this long after it was made, then given up. */
  retryForSeconds: number;
  /** Plain http and private, loopback and link-local addresses allowed (development, tests). */
  allowPrivate: boolean;
  /** Events are kept in the feed this long. */
  eventRetentionSeconds: number;
}

/** false, true (every peer), or addresses/CIDRs of the proxies (and proxy-addr's named ranges). */
export type TrustProxy = boolean | string[];

/** Bounds on every connection, so slow or idle clients cannot hold the process's sockets. */
export interface HttpLimits {
  /** The whole request, headers and body, must arrive within this (Node's requestTimeout). */
  requestTimeoutMs: number;
  /** The headers must arrive within this (Node's headersTimeout; at most requestTimeoutMs). */
  headersTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (socket idle timeout). */
  connectionTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests. */
  keepAliveTimeoutMs: number;
  /** Connections above this many are closed as soon as they are accepted. */
  maxConnections: number;
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

/**
 * Where uploaded archives go: TAKEOUT_DIR, else a `takeout` folder beside the SQLite file (the
 * server's data directory), else — a database with no file of its own here — the OS temp dir.
 */
function takeoutDir(env: Env, database: string): string {
  const raw = env.TAKEOUT_DIR;
  if (raw !== undefined && raw !== '') return resolve(raw);
  const file = database.slice('sqlite:'.length);
  if (database.startsWith('sqlite:') && file !== ':memory:') return resolve(dirname(file), 'takeout');
  return join(tmpdir(), 'stride-takeout');
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

function databaseReplicaUrl(env: Env, primary: string): string | undefined {
  const raw = env.DATABASE_REPLICA_URL;
  if (raw === undefined || raw === '') return undefined;
  if (!/^postgres(ql)?:\/\/.+/.test(raw)) throw new ConfigError(`DATABASE_REPLICA_URL must be postgres://…, got "${raw}"`);
  if (primary.startsWith('sqlite:')) throw new ConfigError('DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL (a replica of it)');
  return raw;
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

/** proxy-addr's names for address ranges, accepted in TRUST_PROXY beside addresses and CIDRs. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrCidr(entry: string): boolean {
  if (NAMED_RANGES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function trustProxy(env: Env): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'off' || raw === 'false') return false;
  if (raw === 'true') return true;
  // A hop count cannot tell the proxy from a client that sends enough X-Forwarded-For entries
  // itself; Fastify 5 ignores one (trusts nobody), so it is refused here rather than silently void.
  if (/^\d+$/.test(raw)) {
    throw new ConfigError(`TRUST_PROXY takes the proxies' addresses/CIDRs, not a hop count, got "${env.TRUST_PROXY}"`);
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.every(isAddressOrCidr)) return entries;
  throw new ConfigError(
    `TRUST_PROXY must be off, true or a comma-separated list of addresses/CIDRs, got "${env.TRUST_PROXY}"`,
  );
}

function httpLimits(env: Env): HttpLimits {
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT', 30, 1, 3600) * 1000;
  return {
    requestTimeoutMs,
    // Headers are a few hundred bytes: a client that has not sent them in 10 s is not a real one.
    headersTimeoutMs: Math.min(requestTimeoutMs, 10_000),
    // No handler of Stride is silent for twice the time a whole request may take to arrive.
    connectionTimeoutMs: 2 * requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT', 72, 1, 3600) * 1000,
    maxConnections: integer(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000),
  };
}

function boolean(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function smtpConfig(env: Env, publicUrl: string): SmtpConfig | undefined {
  const raw = env.SMTP_URL;
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL must be smtp://USER:PASSWORD@HOST:PORT or smtps://…, got a value that is not a URL');
  }
  // The password in the URL stays out of the message.
  if (!['smtp:', 'smtps:'].includes(parsed.protocol) || parsed.hostname === '') {
    throw new ConfigError(`SMTP_URL must be smtp://USER:PASSWORD@HOST:PORT or smtps://…, got one starting "${parsed.protocol}//"`);
  }
  const from = env.SMTP_FROM && env.SMTP_FROM !== '' ? env.SMTP_FROM : `Stride <stride@${new URL(publicUrl).hostname}>`;
  if (!/@[^\s@>]+/.test(from) || /[\r\n]/.test(from)) throw new ConfigError(`SMTP_FROM must be an email address, optionally with a name ("Stride <stride@example.com>"), got "${from}"`);
  return { url: raw, from };
}

function metricsAccess(env: Env): Config['metrics'] {
  const token = env.METRICS_TOKEN && env.METRICS_TOKEN !== '' ? env.METRICS_TOKEN : undefined;
  // It guards operational data on the public port: no short, guessable value.
  if (token !== undefined && token.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  const port = env.METRICS_PORT && env.METRICS_PORT !== '' ? integer(env, 'METRICS_PORT', 0, 1, 65535) : undefined;
  return { token, port };
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
    databaseReplicaUrl: databaseReplicaUrl(env, databaseUrl(env)),
    databaseTransactionPooling: boolean(env, 'DATABASE_TRANSACTION_POOLING'),
    redisUrl,
    dpopNonce: boolean(env, 'DPOP_NONCE'),
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 2_592_000, 1, 10 * 365 * 86400),
    refreshTokenTtl: integer(env, 'REFRESH_TOKEN_TTL', 365 * 86400, 1, 10 * 365 * 86400),
    // RFC 6749 §4.1.2 recommends at most 10 minutes for authorization codes.
    authCodeTtl: integer(env, 'AUTH_CODE_TTL', 600, 1, 600),
    refreshReplayWindow: integer(env, 'REFRESH_REPLAY_WINDOW', 30, 0, 3600),
    sessionTtl: integer(env, 'SESSION_TTL', 14 * 86400, 60, 365 * 86400),
    // RFC 8628 §3.2: 5 seconds when the server says nothing.
    devicePollInterval: integer(env, 'DEVICE_POLL_INTERVAL', 5, 1, 60),
    sweepInterval: integer(env, 'SWEEP_INTERVAL', 600, 1, 86400),
    logLevel,
    rateLimits: {
      login: rateLimit(env, 'RATE_LIMIT_LOGIN', '10/min', off),
      loginAccount: rateLimit(env, 'RATE_LIMIT_LOGIN_ACCOUNT', '10/15min', off),
      passwordCheck: rateLimit(env, 'RATE_LIMIT_PASSWORD_CHECK', '5/15min', off),
      deviceCodes: rateLimit(env, 'RATE_LIMIT_DEVICE_CODES', '100/min', off),
      registration: rateLimit(env, 'RATE_LIMIT_REGISTRATION', '10/hour', off),
      token: rateLimit(env, 'RATE_LIMIT_TOKEN', '600/min', off),
      api: rateLimit(env, 'RATE_LIMIT_API', '6000/min', off),
      // Fitbit's limit: requests per person and app in each clock hour (docs/migrating-from-fitbit.md).
      fitbit: off || env.FITBIT_RATE_LIMIT === 'off' ? null : { max: integer(env, 'FITBIT_RATE_LIMIT', 150, 1, 1_000_000), windowMs: 3_600_000 },
    },
    trustProxy: trustProxy(env),
    http: httpLimits(env),
    webhooks: {
      coalesceSeconds: integer(env, 'WEBHOOK_COALESCE', 30, 0, 3600),
      retryForSeconds: integer(env, 'WEBHOOK_RETRY_FOR', 3 * 86400, 60, 30 * 86400),
      allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE'),
      eventRetentionSeconds: integer(env, 'EVENT_RETENTION', 30 * 86400, 3600, 3650 * 86400),
    },
    metrics: metricsAccess(env),
    registration: registrationSettings(env),
    sandbox: { live: boolean(env, 'SANDBOX_LIVE'), days: integer(env, 'SANDBOX_DAYS', 90, 1, 365) },
    takeout: {
      maxArchiveBytes: integer(env, 'TAKEOUT_MAX_BYTES', 4 * 1024 ** 3, 1, 2 ** 50),
      leaseSeconds: integer(env, 'TAKEOUT_LEASE', 30, 1, 3600),
      archiveDir: takeoutDir(env, databaseUrl(env)),
      unconfirmedKeptSeconds: integer(env, 'TAKEOUT_UNCONFIRMED_KEPT', 86400, 60, 365 * 86400),
    },
    smtp: smtpConfig(env, publicUrl),
  };
}
