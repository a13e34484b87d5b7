/**
 * With REDIS_URL the sign-in counters (per address, per email, per device cookie) and the account
 * pages' password checks live in Redis, shared by every server process: two app instances on one
 * Redis spend one budget. Skipped when no Redis answers (TEST_REDIS_URL, default
 * redis://127.0.0.1:6379). One dialect is enough: the counters do not touch the database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { createStores } from '../../src/store/stores.js';
import type { TestApp } from '../support/app.js';
import { Browser, createFixture, createOAuthTestApp, formFields, type Fixture } from '../oauth/flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { SHARED_REDIS_URL, sharedRedisUnavailable } from '../support/redis-server.js';
import { newAccount, PASSWORD } from './pages-support.js';

cheapPasswordHashing();

const REDIS_URL = SHARED_REDIS_URL;
const unavailable = await sharedRedisUnavailable();

/** A sign-in through a trusted proxy (TRUST_PROXY=127.0.0.1) for the client `forwardedFor`. */
async function signInFrom(t: TestApp, email: string, password: string, forwardedFor: string) {
  const browser = new Browser(t.app);
  const fields = formFields((await browser.get('/login')).body, '/login');
  return browser.post('/login', { ...fields, email, password }, { 'x-forwarded-for': forwardedFor });
}

describe('sign-in rate limit shared through Redis', { skip: unavailable ?? false }, () => {
  let first: TestApp;
  let second: TestApp;
  let f: Fixture;
  before(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys('stride-rate-limit:login*');
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    const env = { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '5/min', RATE_LIMIT_LOGIN_ACCOUNT: '3/min', TRUST_PROXY: '127.0.0.1', REDIS_URL };
    first = await createOAuthTestApp('sqlite', env);
    second = await createOAuthTestApp('sqlite', env);
    f = await createFixture(first);
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it('two processes share one budget, sign-up and sign-in alike', async () => {
    // A client address of this run only, so runs sharing the Redis server do not meet.
    const client = `2001:db8::${randomBytes(4).toString('hex').replace(/(....)(....)/, '$1:$2')}`;
    const signUpPage = new Browser(first.app);
    const signUpFields = formFields((await signUpPage.get('/signup')).body, '/signup');
    const signUp = await signUpPage.post('/signup', { ...signUpFields, email: 'not an email', password: 'x' }, { 'x-forwarded-for': client });
    assert.notEqual(signUp.status, 429);
    const statuses: number[] = [];
    for (const [i, t] of [second, first, second, first, second].entries()) {
      statuses.push((await signInFrom(t, `other-${i}@example.com`, 'wrong password', client)).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 429], 'the sign-up spent one of the five');
  });

  it('two processes share one per-account budget, whatever the addresses', async () => {
    const statuses: number[] = [];
    for (const [i, t] of [first, second, first, second].entries()) {
      statuses.push((await signInFrom(t, f.user.email, 'wrong password', `203.0.113.${50 + i}`)).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
  });
});

describe('password checks and device cookies shared through Redis', { skip: unavailable ?? false }, () => {
  let first: TestApp;
  let secondDb: Db;
  let second: FastifyInstance;
  before(async () => {
    first = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN_ACCOUNT: '3/min', TRUST_PROXY: '127.0.0.1', REDIS_URL });
    // A second process on the same database and the same Redis.
    secondDb = openDatabase(first.database.url);
    second = await buildApp({ config: first.config, stores: createStores(secondDb), clock: first.clock });
    await second.ready();
  });
  after(async () => {
    await second?.close();
    await secondDb?.close();
    await first?.close();
  });

  // Client addresses of this run only, so runs sharing the Redis server do not meet.
  const run = randomBytes(2);
  let sent = 0;
  const fresh = () => ({ 'x-forwarded-for': `10.${run[0]}.${run[1]}.${++sent}` });
  /** A browser holding `cookies`, sent to `app` (a load balancer sends one browser to either process). */
  const on = (app: FastifyInstance, cookies: Map<string, string> = new Map()) => {
    const browser = new Browser(app);
    for (const [name, value] of cookies) browser.cookies.set(name, value);
    return browser;
  };
  const signInOn = async (browser: Browser, email: string, password: string) => {
    const fields = formFields((await browser.get('/login')).body, '/login');
    return (await browser.post('/login', { ...fields, email, password }, fresh())).status;
  };

  it('two processes share one account\'s password checks: the one that spends the last ends the session', async () => {
    const person = await newAccount(first, 'Balanced');
    const home = on(first.app);
    assert.equal(await signInOn(home, person.email, PASSWORD), 303);
    const answers: string[] = [];
    for (let guess = 1; guess <= 5; guess++) {
      const browser = on(guess % 2 === 1 ? first.app : second, home.cookies);
      const page = await browser.get('/account');
      const fields = formFields(page.body, '/account/password');
      const answer = (await browser.post('/account/password', { ...fields, current_password: `guess ${guess}`, new_password: 'a thief\'s password' }, fresh())).location();
      answers.push(answer.pathname === '/login' ? 'signed out' : answer.searchParams.get('password')!);
    }
    assert.deepEqual(answers, ['wrong-current', 'wrong-current', 'wrong-current', 'wrong-current', 'signed out']);
    assert.equal((await on(second, home.cookies).get('/account')).location().pathname, '/login');
  });

  it('a device cookie from a sign-in on one process lets the person in on the other while the email is locked', async () => {
    const person = await newAccount(first, 'Travelling');
    const home = on(first.app);
    assert.equal(await signInOn(home, person.email, PASSWORD), 303);
    const statuses: number[] = [];
    for (const app of [second, first.app, second, first.app]) statuses.push(await signInOn(on(app), person.email, 'a stranger\'s guess'));
    assert.deepEqual(statuses, [401, 401, 401, 429], 'three failures on either process lock the email on both');
    const device = new Map([['stride_device', home.cookies.get('stride_device')!]]);
    assert.equal(await signInOn(on(second, device), person.email, PASSWORD), 303);
  });
});
