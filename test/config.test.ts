import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseRateLimit } from '../src/config.js';

describe('configuration', () => {
  it('has the defaults the README lists', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.equal(config.authUrl, 'http://localhost:3000');
    assert.equal(config.databaseUrl, 'sqlite:./data/stride.sqlite');
    assert.equal(config.accessTokenTtl, 2_592_000);
    assert.equal(config.authCodeTtl, 600);
    assert.equal(config.refreshReplayWindow, 30);
    assert.equal(config.redisUrl, undefined);
    assert.deepEqual(config.rateLimits.login, { max: 10, windowMs: 60_000 });
    assert.deepEqual(config.rateLimits.loginAccount, { max: 10, windowMs: 15 * 60_000 });
    assert.deepEqual(config.rateLimits.passwordCheck, { max: 5, windowMs: 15 * 60_000 });
    assert.equal(config.trustProxy, false);
  });

  it('reads REGISTRATION (off by default) and requires REGISTRATION_OWNER when it is on', () => {
    assert.deepEqual(loadConfig({}).registration, { mode: 'off', owner: undefined });
    assert.deepEqual(loadConfig({ REGISTRATION: 'token', REGISTRATION_OWNER: 'Ops@Example.com' }).registration, { mode: 'token', owner: 'ops@example.com' });
    assert.equal(loadConfig({ REGISTRATION: 'open', REGISTRATION_OWNER: 'ops@example.com' }).registration.mode, 'open');
    assert.throws(() => loadConfig({ REGISTRATION: 'token' }), (error: Error) => error instanceof ConfigError && /REGISTRATION_OWNER/.test(error.message));
    assert.throws(() => loadConfig({ REGISTRATION: 'yes', REGISTRATION_OWNER: 'ops@example.com' }), /REGISTRATION must be one of off, token, open/);
    assert.throws(() => loadConfig({ REGISTRATION: 'open', REGISTRATION_OWNER: 'nobody' }), /REGISTRATION_OWNER must be an email address/);
  });

  it('sends no email without SMTP_URL, and reads SMTP_URL and SMTP_FROM', () => {
    assert.equal(loadConfig({}).smtp, undefined);
    assert.deepEqual(loadConfig({ SMTP_URL: 'smtp://user:pass@mail.example.com:587', PUBLIC_URL: 'https://stride.example.com' }).smtp, {
      url: 'smtp://user:pass@mail.example.com:587',
      from: 'Stride <stride@stride.example.com>',
    });
    assert.equal(loadConfig({ SMTP_URL: 'smtps://mail.example.com', SMTP_FROM: 'Ops <ops@example.com>' }).smtp?.from, 'Ops <ops@example.com>');
    assert.throws(() => loadConfig({ SMTP_URL: 'http://user:secret@mail.example.com' }), (error: Error) => error instanceof ConfigError && /SMTP_URL must be smtp:/.test(error.message) && !error.message.includes('secret'));
    assert.throws(() => loadConfig({ SMTP_URL: 'mail.example.com' }), /SMTP_URL must be smtp:/);
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: 'nobody' }), /SMTP_FROM must be an email address/);
  });

  it('puts uploaded Takeout archives in TAKEOUT_DIR, else beside the SQLite file, else in the temp dir', () => {
    assert.equal(loadConfig({}).takeout.archiveDir, resolve('data', 'takeout'));
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite:/srv/stride/db.sqlite' }).takeout.archiveDir, '/srv/stride/takeout');
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).takeout.archiveDir, join(tmpdir(), 'stride-takeout'));
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://db.example/stride' }).takeout.archiveDir, join(tmpdir(), 'stride-takeout'));
    assert.equal(loadConfig({ TAKEOUT_DIR: '/var/lib/stride/uploads' }).takeout.archiveDir, '/var/lib/stride/uploads');
  });

  it('reads SANDBOX_LIVE (off by default) and SANDBOX_DAYS (90), refusing anything else', () => {
    assert.deepEqual(loadConfig({}).sandbox, { live: false, days: 90 });
    assert.deepEqual(loadConfig({ SANDBOX_LIVE: 'true', SANDBOX_DAYS: '7' }).sandbox, { live: true, days: 7 });
    assert.throws(() => loadConfig({ SANDBOX_LIVE: 'yes' }), /SANDBOX_LIVE must be true or false/);
    assert.throws(() => loadConfig({ SANDBOX_DAYS: '0' }), /SANDBOX_DAYS must be between 1 and 365/);
  });

  it('bounds every connection by default, and derives the header and idle timeouts from REQUEST_TIMEOUT', () => {
    assert.deepEqual(loadConfig({}).http, {
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      connectionTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      maxConnections: 10_000,
    });
    assert.deepEqual(loadConfig({ REQUEST_TIMEOUT: '2', KEEP_ALIVE_TIMEOUT: '5', MAX_CONNECTIONS: '50' }).http, {
      requestTimeoutMs: 2000,
      headersTimeoutMs: 2000,
      connectionTimeoutMs: 4000,
      keepAliveTimeoutMs: 5000,
      maxConnections: 50,
    });
  });

  it('reads TRUST_PROXY as off, true, or a list of addresses and CIDRs', () => {
    for (const off of ['', 'off', 'false']) assert.equal(loadConfig({ TRUST_PROXY: off }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1' }).trustProxy, ['10.0.0.1']);
    assert.deepEqual(
      loadConfig({ TRUST_PROXY: '10.0.0.0/8, 2001:db8::/32 ,loopback' }).trustProxy,
      ['10.0.0.0/8', '2001:db8::/32', 'loopback'],
    );
  });

  it('derives PUBLIC_URL from PORT and AUTH_URL from PUBLIC_URL, without a trailing slash', () => {
    assert.equal(loadConfig({ PORT: '8080' }).publicUrl, 'http://localhost:8080');
    const config = loadConfig({ PUBLIC_URL: 'https://api.example.com/' });
    assert.equal(config.publicUrl, 'https://api.example.com');
    assert.equal(config.authUrl, 'https://api.example.com');
  });

  it('sweeps every SWEEP_INTERVAL seconds, ten minutes unless set, and refuses zero', () => {
    assert.equal(loadConfig({}).sweepInterval, 600);
    assert.equal(loadConfig({ SWEEP_INTERVAL: '30' }).sweepInterval, 30);
    assert.throws(() => loadConfig({ SWEEP_INTERVAL: '0' }), /SWEEP_INTERVAL must be between 1 and 86400/);
  });

  it('tells devices to poll every DEVICE_POLL_INTERVAL seconds, 5 (RFC 8628) unless set, from 1 to 60', () => {
    assert.equal(loadConfig({}).devicePollInterval, 5);
    assert.equal(loadConfig({ DEVICE_POLL_INTERVAL: '1' }).devicePollInterval, 1);
    assert.throws(() => loadConfig({ DEVICE_POLL_INTERVAL: '0' }), /DEVICE_POLL_INTERVAL must be between 1 and 60/);
    assert.throws(() => loadConfig({ DEVICE_POLL_INTERVAL: '61' }), /DEVICE_POLL_INTERVAL must be between 1 and 60/);
  });

  it('serves no metrics unless METRICS_TOKEN or METRICS_PORT says how', () => {
    assert.deepEqual(loadConfig({}).metrics, { token: undefined, port: undefined });
    assert.deepEqual(loadConfig({ METRICS_TOKEN: 'a'.repeat(16), METRICS_PORT: '9464' }).metrics, { token: 'a'.repeat(16), port: 9464 });
  });

  it('accepts PostgreSQL and in-memory SQLite URLs', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).databaseUrl, 'postgres://u@h/db');
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl, 'sqlite::memory:');
  });

  it('takes a replica and transaction pooling for PostgreSQL', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_REPLICA_URL: 'postgres://u@r/db', DATABASE_TRANSACTION_POOLING: 'true' });
    assert.equal(config.databaseReplicaUrl, 'postgres://u@r/db');
    assert.equal(config.databaseTransactionPooling, true);
    assert.equal(loadConfig({}).databaseReplicaUrl, undefined);
    assert.equal(loadConfig({}).databaseTransactionPooling, false);
  });

  it('turns every rate limit off with RATE_LIMIT=off', () => {
    const { rateLimits } = loadConfig({ RATE_LIMIT: 'off', RATE_LIMIT_LOGIN: '5/min' });
    assert.deepEqual(rateLimits, { login: null, loginAccount: null, passwordCheck: null, deviceCodes: null, registration: null, token: null, api: null, fitbit: null });
  });

  it('reads FITBIT_RATE_LIMIT as requests per clock hour, 150 by default, off with off', () => {
    assert.deepEqual(loadConfig({}).rateLimits.fitbit, { max: 150, windowMs: 3_600_000 });
    assert.deepEqual(loadConfig({ FITBIT_RATE_LIMIT: '500' }).rateLimits.fitbit, { max: 500, windowMs: 3_600_000 });
    assert.equal(loadConfig({ FITBIT_RATE_LIMIT: 'off' }).rateLimits.fitbit, null);
    assert.throws(() => loadConfig({ FITBIT_RATE_LIMIT: '150/hour' }), /FITBIT_RATE_LIMIT must be a whole number/);
  });

  it('parses rates like 10/min, 300/s and 1000/hour', () => {
    assert.deepEqual(parseRateLimit('X', '300/s'), { max: 300, windowMs: 1000 });
    assert.deepEqual(parseRateLimit('X', '1000/hour'), { max: 1000, windowMs: 3_600_000 });
    assert.deepEqual(parseRateLimit('X', '5/10min'), { max: 5, windowMs: 600_000 });
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://example.com' }, 'PUBLIC_URL'],
    [{ AUTH_URL: 'https://example.com/?q=1' }, 'AUTH_URL'],
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://u@h/db', DATABASE_REPLICA_URL: 'replica:5432' }, 'DATABASE_REPLICA_URL'],
    [{ DATABASE_REPLICA_URL: 'postgres://u@r/db' }, 'DATABASE_REPLICA_URL'],
    [{ DATABASE_TRANSACTION_POOLING: 'yes please' }, 'DATABASE_TRANSACTION_POOLING'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ ACCESS_TOKEN_TTL: '-5' }, 'ACCESS_TOKEN_TTL'],
    [{ ACCESS_TOKEN_TTL: '1.5' }, 'ACCESS_TOKEN_TTL'],
    [{ AUTH_CODE_TTL: '601' }, 'AUTH_CODE_TTL'],
    [{ REFRESH_REPLAY_WINDOW: 'soon' }, 'REFRESH_REPLAY_WINDOW'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ RATE_LIMIT: 'maybe' }, 'RATE_LIMIT'],
    [{ RATE_LIMIT_LOGIN: 'ten per minute' }, 'RATE_LIMIT_LOGIN'],
    [{ RATE_LIMIT_TOKEN: '0/min' }, 'RATE_LIMIT_TOKEN'],
    [{ RATE_LIMIT_LOGIN_ACCOUNT: 'ten' }, 'RATE_LIMIT_LOGIN_ACCOUNT'],
    [{ RATE_LIMIT_PASSWORD_CHECK: '0/15min' }, 'RATE_LIMIT_PASSWORD_CHECK'],
    [{ REQUEST_TIMEOUT: '0' }, 'REQUEST_TIMEOUT'],
    [{ REQUEST_TIMEOUT: '2s' }, 'REQUEST_TIMEOUT'],
    [{ KEEP_ALIVE_TIMEOUT: '-1' }, 'KEEP_ALIVE_TIMEOUT'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS'],
    [{ MAX_CONNECTIONS: 'many' }, 'MAX_CONNECTIONS'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '2' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1,,10.0.0.2' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'proxy.internal' }, 'TRUST_PROXY'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ METRICS_PORT: 'nine' }, 'METRICS_PORT'],
  ];
  for (const [env, name] of bad) {
    it(`stops with one line naming ${name} for ${JSON.stringify(Object.values(env)[0])}`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) =>
          error instanceof ConfigError && error.message.startsWith(`${name} `) && !error.message.includes('\n'),
      );
    });
  }
});
