import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseRateLimit } from '../src/config.js';

describe('configuration', () => {
  it('has the defaults of SPEC §1', () => {
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
  });

  it('derives PUBLIC_URL from PORT and AUTH_URL from PUBLIC_URL, without a trailing slash', () => {
    assert.equal(loadConfig({ PORT: '8080' }).publicUrl, 'http://localhost:8080');
    const config = loadConfig({ PUBLIC_URL: 'https://api.example.com/' });
    assert.equal(config.publicUrl, 'https://api.example.com');
    assert.equal(config.authUrl, 'https://api.example.com');
  });

  it('accepts PostgreSQL and in-memory SQLite URLs', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).databaseUrl, 'postgres://u@h/db');
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl, 'sqlite::memory:');
  });

  it('turns every rate limit off with RATE_LIMIT=off', () => {
    const { rateLimits } = loadConfig({ RATE_LIMIT: 'off', RATE_LIMIT_LOGIN: '5/min' });
    assert.deepEqual(rateLimits, { login: null, loginAccount: null, token: null, api: null });
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
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ ACCESS_TOKEN_TTL: '-5' }, 'ACCESS_TOKEN_TTL'],
    [{ ACCESS_TOKEN_TTL: '1.5' }, 'ACCESS_TOKEN_TTL'],
    [{ AUTH_CODE_TTL: '601' }, 'AUTH_CODE_TTL'],
    [{ REFRESH_REPLAY_WINDOW: 'soon' }, 'REFRESH_REPLAY_WINDOW'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ RATE_LIMIT: 'maybe' }, 'RATE_LIMIT'],
    [{ RATE_LIMIT_LOGIN: 'ten per minute' }, 'RATE_LIMIT_LOGIN'],
    [{ RATE_LIMIT_TOKEN: '0/min' }, 'RATE_LIMIT_TOKEN'],
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
