import assert from 'node:assert/strict';
import { createAccount } from '../../src/domain/users.js';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { Browser, createFixture, createOAuthTestApp, encodeForm, formFields, signIn, type Fixture } from '../oauth/flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

describe('rate limits while Redis is unreachable', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    // Nothing listens on port 1: every command to the counter store fails.
    t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '2/min', REDIS_URL: 'redis://127.0.0.1:1' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('let requests through unlimited instead of failing them', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await signIn(new Browser(t.app), f.user.email, 'wrong password')).status);
    assert.deepEqual(statuses, [401, 401, 401, 401]);
    assert.equal((await signIn(new Browser(t.app), f.user.email, f.password)).status, 303, 'a right password still signs in');
  });
});

/** One sign-in attempt as a browser would make it, from `remoteAddress`, with extra request headers. */
async function attempt(
  t: TestApp,
  email: string,
  password: string,
  headers: Record<string, string> = {},
  remoteAddress = '127.0.0.1',
): Promise<{ status: number; body: string }> {
  const page = await t.app.inject({ method: 'GET', url: '/login' });
  const cookie = page.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  const response = await t.app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress,
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: encodeForm({ ...formFields(page.body, '/login'), email, password }),
  });
  return { status: response.statusCode, body: response.body };
}

describe('client address without TRUST_PROXY', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '2/min' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('ignores X-Forwarded-For: a spoofed address does not get a fresh sign-in counter', async () => {
    const statuses: number[] = [];
    for (const forwarded of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      statuses.push((await attempt(t, f.user.email, 'wrong password', { 'x-forwarded-for': forwarded })).status);
    }
    assert.deepEqual(statuses, [401, 401, 429]);
  });
});

describe('client address with TRUST_PROXY=127.0.0.1', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '2/min', TRUST_PROXY: '127.0.0.1' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('gives each forwarded address behind the proxy its own sign-in counter', async () => {
    const first = { 'x-forwarded-for': '203.0.113.10' };
    const second = { 'x-forwarded-for': '203.0.113.20' };
    const statuses: number[] = [];
    for (const headers of [first, first, first, second, second, second]) {
      statuses.push((await attempt(t, f.user.email, 'wrong password', headers)).status);
    }
    assert.deepEqual(statuses, [401, 401, 429, 401, 401, 429]);
  });

  it('counts the address the proxy saw, whatever the client put before it', async () => {
    const statuses: number[] = [];
    for (const spoofed of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      statuses.push((await attempt(t, f.user.email, 'wrong password', { 'x-forwarded-for': `${spoofed}, 203.0.113.30` })).status);
    }
    assert.deepEqual(statuses, [401, 401, 429]);
  });

  it('ignores X-Forwarded-For from a peer that is not the trusted proxy', async () => {
    const statuses: number[] = [];
    for (const forwarded of ['203.0.113.41', '203.0.113.42', '203.0.113.43']) {
      statuses.push((await attempt(t, f.user.email, 'wrong password', { 'x-forwarded-for': forwarded }, '192.0.2.50')).status);
    }
    assert.deepEqual(statuses, [401, 401, 429]);
  });
});

describe('IPv6 client addresses (RATE_LIMIT_TOKEN=2/min)', () => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_TOKEN: '2/min' });
  });
  after(() => t.close());

  /** A token request from `remoteAddress`: 400 while the address has requests left, then 429. */
  const tokenRequestFrom = async (remoteAddress: string) =>
    (await t.app.inject({ method: 'POST', url: '/oauth2/token', remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=x' })).statusCode;

  it('counts every address of one /64 as one client, and an IPv4-mapped address as its IPv4 address', async () => {
    const statuses: number[] = [];
    // Three interface identifiers of one /64, however written: one counter.
    for (const address of ['2001:db8:1:2::1', '2001:DB8:1:2:ffff::9', '2001:db8:1:2:abcd:1234:5678:9abc']) statuses.push(await tokenRequestFrom(address));
    assert.deepEqual(statuses, [401, 401, 429]);
    assert.equal(await tokenRequestFrom('2001:db8:1:3::1'), 401, 'the next /64 is another client');

    const mapped: number[] = [];
    for (const address of ['::ffff:192.0.2.7', '::ffff:c000:207', '192.0.2.7']) mapped.push(await tokenRequestFrom(address));
    assert.deepEqual(mapped, [401, 401, 429]);
    assert.equal(await tokenRequestFrom('192.0.2.8'), 401, 'another IPv4 address is another client');
  });
});

describe('per-account sign-in throttle (RATE_LIMIT_LOGIN_ACCOUNT=3/min)', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp('sqlite', {
      RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '100/min', RATE_LIMIT_LOGIN_ACCOUNT: '3/min', TRUST_PROXY: '127.0.0.1',
    });
    f = await createFixture(t);
  });
  after(() => t.close());

  const from = (i: number) => ({ 'x-forwarded-for': `203.0.113.${100 + i}` });

  it('limits attempts on one email from many addresses; another email is unaffected', async () => {
    const statuses: number[] = [];
    // Any spelling of the address counts for the same email.
    const spellings = [f.user.email, f.user.email.toUpperCase(), ` ${f.user.email} `, f.user.email];
    for (const [i, email] of spellings.entries()) statuses.push((await attempt(t, email, 'wrong password', from(i))).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const limited = await attempt(t, f.user.email, f.password, from(9));
    assert.equal(limited.status, 429, 'even the right password waits');
    assert.equal(JSON.parse(limited.body).error, 'rate_limited');
    assert.equal((await attempt(t, f.developer.email, f.password, from(10))).status, 303, 'another account signs in');
  });

  it('lets a person who knows their password sign in from fresh browsers as often as they like: only failures count', async () => {
    const person = await createAccount(t.database.stores.users, t.clock, { email: `regular-${Date.now()}@example.com`, password: f.password, displayName: 'Regular' });
    // Twelve sign-ins from twelve fresh browsers (no device cookie) within the minute, with 3 allowed.
    for (let i = 0; i < 12; i++) assert.equal((await attempt(t, person.email, f.password, from(40 + i))).status, 303, `sign-in ${i + 1}`);
    // Guessing is still slowed: the failures lock the email after the third.
    const guesses: number[] = [];
    for (let i = 0; i < 10; i++) guesses.push((await attempt(t, person.email, 'a wrong guess', from(60 + i))).status);
    assert.deepEqual(guesses, [401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
  });

  it('answers a limited unknown email exactly as a limited existing one', async () => {
    const unknown = `nobody-${Date.now()}@example.com`;
    const answers: Array<{ status: number; body: string }> = [];
    for (let i = 0; i < 4; i++) answers.push(await attempt(t, unknown, 'wrong password', from(20 + i)));
    assert.deepEqual(answers.map((a) => a.status), [401, 401, 401, 429]);
    const known = await attempt(t, f.user.email, 'wrong password', from(30));
    assert.equal(known.status, 429);
    const shape = (body: string) => ({ ...JSON.parse(body), error_description: JSON.parse(body).error_description.replace(/\d+/g, 'N') });
    assert.deepEqual(shape(answers[3]!.body), shape(known.body));
  });
});
