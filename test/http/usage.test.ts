/**
 * App usage counts the tests' own traffic exactly: API reads and writes by outcome, 429s, token
 * requests, tokens issued and refreshed, how much of its rate limit a grant spent, the last errors
 * (never a credential); requests that name no proven app count nothing; two server instances on one
 * database sum, and with Redis their spending of one grant's limit is one count.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import {
  authorizeAndAllow, authorizeUrl, Browser, createFixture, createOAuthTestApp, encodeForm, obtainCode, obtainTokens, pkce, refresh, signIn, tokenRequest,
  type Fixture, type Tokens,
} from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { SHARED_REDIS_URL, sharedRedisUnavailable } from '../support/redis-server.js';
import { sweepExpired } from '../../src/store/sweep.js';
import { bearer } from '../support/tokens.js';
import { newAccount, signedIn } from '../web/pages-support.js';

cheapPasswordHashing();

/** The app's counters in the database, metric → count over every day (the busiest window: the most). */
async function usageIn(t: TestApp, appId: string): Promise<Record<string, number>> {
  const rows = await t.database.db.kysely.selectFrom('app_usage').select(['metric', 'count']).where('app_id', '=', appId).execute();
  const usage: Record<string, number> = {};
  for (const { metric, count } of rows) {
    usage[metric] = metric === 'api.busiest_window' ? Math.max(usage[metric] ?? 0, Number(count)) : (usage[metric] ?? 0) + Number(count);
  }
  return usage;
}

forEachDialect('app usage', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let tokens: Tokens;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_API: '5/min' });
    f = await createFixture(t);
    tokens = await obtainTokens(t, f, { scope: 'read_profile write_activity' });
  });
  after(() => t.close());

  const usageOf = (appId: string) => usageIn(t, appId);
  const read = (token: string, app = t.app) => app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });

  it('counts every answer of the app exactly, and nothing it did not cause', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await read(tokens.access_token)).statusCode, 200);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: { ...bearer(tokens.access_token), 'content-type': 'application/json' }, payload: '{"samples": 1}' });
    assert.equal(bad.statusCode, 400);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await read(tokens.access_token)).statusCode);
    assert.deepEqual(statuses, [200, 429, 429]);
    assert.equal((await read('sat_not_a_token')).statusCode, 401, 'no app: not counted');

    const refreshed = await refresh(t, f, tokens.refresh_token);
    assert.equal(refreshed.statusCode, 200);
    assert.equal((await refresh(t, f, 'srt_not_a_token')).json().error, 'invalid_grant');
    const wrongSecret = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: f.app.clientId, client_secret: 'not the secret' });
    assert.equal(wrongSecret.statusCode, 401, 'the client did not prove itself: not counted');
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'no-such-client', client_secret: 'x' });

    await t.app.usage.flush();
    assert.deepEqual(await usageOf(f.app.id), {
      'api_read.2xx': 4,
      'api_read.429': 2,
      'api_write.4xx': 1,
      'token.2xx': 2,
      'token.4xx': 1,
      'tokens.issued': 1,
      'tokens.refreshed': 1,
      // The limiter's own count: five spent, the two refused ones beyond the limit add nothing.
      'api.busiest_window': 5,
    });
    assert.deepEqual(await usageOf(f.publicApp.id), {});

    const errors = await t.database.db.kysely.selectFrom('app_usage_errors').selectAll().where('app_id', '=', f.app.id).orderBy('id').execute();
    assert.deepEqual(errors.map((e) => [Number(e.status), e.error, e.route]), [
      [400, 'invalid_request', '/v1/users/me/activities/steps/'],
      [429, 'rate_limited', '/v1/users/me'],
      [429, 'rate_limited', '/v1/users/me'],
      [400, 'invalid_grant', '/oauth2/token'],
    ]);
    assert.ok(errors.every((e) => !/sat_|srt_|sac_/.test(JSON.stringify(e))), 'never a token');
  });

  it('sums the counts of two server instances on one database, and shows them on the app page', async () => {
    const second = await buildApp({ config: t.config, stores: t.database.stores, clock: t.clock });
    await second.ready();
    try {
      // Another person's grant: the first one has used up its rate limit.
      const fresh = await obtainTokens(t, { ...f, user: await newAccount(t, 'Second') }, { scope: 'read_profile' });
      assert.equal((await read(fresh.access_token)).statusCode, 200);
      assert.equal((await read(fresh.access_token, second)).statusCode, 200);
      assert.equal((await read(fresh.access_token, second)).statusCode, 200);
      await Promise.all([t.app.usage.flush(), second.usage.flush()]);
    } finally {
      await second.close();
    }
    const usage = await usageOf(f.app.id);
    assert.equal(usage['api_read.2xx'], 4 + 3);
    assert.equal(usage['tokens.issued'], 2);

    const developer = await signedIn(t, f.developer);
    const page = await developer.get(`/dashboard/apps/${f.app.clientId}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /Usage, last 30 days/);
    assert.match(page.body, /<svg class="data-chart usage-chart" id="usage-chart" role="img"/);
    assert.match(page.body, /<strong>2<\/strong> tokens issued · <strong>1<\/strong> refreshed/);
    assert.match(page.body, /Rate limit: each person who connected the app may make <strong>5<\/strong> API requests through it in a minute\. The busiest person so far made <strong>5<\/strong> in one such minute \(100% of the limit\)/);
    assert.match(page.body, /<code>invalid_grant<\/code>/);
  });

  it('has what was counted before a flush in the database once it resolves, though the timer\'s flush had taken it', async () => {
    const fresh = await obtainTokens(t, { ...f, user: await newAccount(t, 'Third') }, { scope: 'read_profile' });
    await t.app.usage.flush();
    const before = (await usageOf(f.app.id))['api_read.2xx']!;
    assert.equal((await read(fresh.access_token)).statusCode, 200);
    // The timer's flush takes the count and is still writing it when the app page asks for its own.
    const timers = t.app.usage.flush();
    await t.app.usage.flush();
    assert.equal((await usageOf(f.app.id))['api_read.2xx'], before + 1);
    await timers;
  });

  it('keeps the counts of a flush the database refused for the next one, and each day under its own date', async () => {
    const readsOn = async (day: string) => {
      const row = await t.database.db.kysely.selectFrom('app_usage').select('count').where('app_id', '=', f.app.id).where('day', '=', day).where('metric', '=', 'api_read.2xx').executeTakeFirst();
      return Number(row?.count ?? 0);
    };
    const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
    const midnight = Math.ceil(t.clock() / 86400) * 86400;
    t.clock.set(midnight - 1);
    const fresh = await obtainTokens(t, { ...f, user: await newAccount(t, 'Night Owl') }, { scope: 'read_profile' });
    await t.app.usage.flush();
    const before = await readsOn(dayOf(midnight - 1));
    assert.equal((await read(fresh.access_token)).statusCode, 200);
    // The table is away for a moment: the flush fails with the database's own error.
    await sql`alter table app_usage rename to app_usage_away`.execute(t.database.db.kysely);
    await assert.rejects(t.app.usage.flush());
    await sql`alter table app_usage_away rename to app_usage`.execute(t.database.db.kysely);
    t.clock.set(midnight + 1);
    assert.equal((await read(fresh.access_token)).statusCode, 200);
    await t.app.usage.flush();

    assert.equal(await readsOn(dayOf(midnight - 1)), before + 1, 'the refused flush, written by the next');
    assert.equal(await readsOn(dayOf(midnight + 1)), 1);
  });

  it("counts a public client's requests only when they carry a code or token issued to it", async () => {
    const client = f.publicApp.clientId;
    const redirectUri = 'com.example.walker:/cb';
    const clientEndpoint = (url: string, form: Record<string, string>) =>
      t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: encodeForm(form) });
    const madeUp = pkce().verifier;
    const { code: othersCode } = await obtainCode(t, f);

    // Anyone can name a public client's id: with made-up codes and tokens, or another app's code, it proves nothing.
    const unproven: Array<[string, Record<string, string>, number]> = [
      ['/oauth2/token', { grant_type: 'authorization_code', code: 'made-up-code', redirect_uri: redirectUri, code_verifier: madeUp, client_id: client }, 400],
      ['/oauth2/token', { grant_type: 'authorization_code', code: othersCode, redirect_uri: redirectUri, code_verifier: madeUp, client_id: client }, 400],
      ['/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'srt_made_up', client_id: client }, 400],
      ['/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'srt_made_up', redirect_uri: 'https://elsewhere.example/cb', client_id: client }, 400],
      ['/oauth2/token', { grant_type: 'refresh_token', client_id: client }, 400],
      ['/oauth2/token', { grant_type: 'password', client_id: client }, 400],
      ['/oauth2/revoke', { token: 'sat_made_up', client_id: client }, 200],
      ['/oauth2/introspect', { token: 'sat_made_up', client_id: client }, 200],
    ];
    for (const [url, form, status] of unproven) assert.equal((await clientEndpoint(url, form)).statusCode, status, JSON.stringify(form));
    await t.app.usage.flush();
    assert.deepEqual(await usageOf(f.publicApp.id), {}, 'nothing counted for the public app');
    const errorsOf = (appId: string) => t.database.db.kysely.selectFrom('app_usage_errors').selectAll().where('app_id', '=', appId).orderBy('id').execute();
    assert.deepEqual(await errorsOf(f.publicApp.id), [], 'nothing in its last errors');

    // Its own code and tokens prove it, whatever the answer.
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const pair = pkce();
    const back = await authorizeAndAllow(browser, authorizeUrl({ response_type: 'code', client_id: client, redirect_uri: redirectUri, code_challenge: pair.challenge, code_challenge_method: 'S256' }));
    const exchange = { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirectUri, client_id: client };
    assert.equal((await tokenRequest(t, { ...exchange, code_verifier: madeUp })).json().error, 'invalid_grant', 'its own code, the wrong verifier');
    const issued = await tokenRequest(t, { ...exchange, code_verifier: pair.verifier });
    assert.equal(issued.statusCode, 200, issued.body);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: issued.json().refresh_token, client_id: client });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal((await clientEndpoint('/oauth2/revoke', { token: refreshed.json().access_token, client_id: client })).statusCode, 200);
    await t.app.usage.flush();
    assert.deepEqual(await usageOf(f.publicApp.id), { 'token.2xx': 3, 'token.4xx': 1, 'tokens.issued': 1, 'tokens.refreshed': 1 });
    assert.deepEqual((await errorsOf(f.publicApp.id)).map((e) => [Number(e.status), e.error, e.route]), [[400, 'invalid_grant', '/oauth2/token']]);
  });

  it('counts a request with a revoked or expired token as the app it was issued to, and one never issued as nobody\'s', async () => {
    const g = await createFixture(t);
    const revokedTokens = await obtainTokens(t, g, { scope: 'read_profile' });
    const revoke = await t.app.inject({
      method: 'POST',
      url: '/oauth2/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeForm({ token: revokedTokens.access_token, client_id: g.app.clientId, client_secret: g.secret }),
    });
    assert.equal(revoke.statusCode, 200);
    assert.equal((await read(revokedTokens.access_token)).statusCode, 401, 'revoked');
    // Well formed, with an issue time as this server writes one, but never issued.
    const neverIssued = `sat_${revokedTokens.access_token.slice(4, 16)}${'A'.repeat(43)}`;
    assert.equal((await read(neverIssued)).statusCode, 401);
    await t.app.usage.flush();
    assert.deepEqual(await usageOf(g.app.id), { 'token.2xx': 2, 'tokens.issued': 1, 'api_read.4xx': 1 });

    // Expired: refused while its row waits for the sweeper, and still the app's once swept.
    const expiring = await obtainTokens(t, g, { scope: 'read_profile' });
    t.clock.advance(expiring.expires_in + 1);
    assert.equal((await read(expiring.access_token)).statusCode, 401, 'expired');
    await sweepExpired(t.database.db.kysely, t.database.db.dialect, t.clock(), 0);
    assert.equal((await read(expiring.access_token)).statusCode, 401, 'expired and swept');
    await t.app.usage.flush();
    assert.deepEqual(await usageOf(g.app.id), { 'token.2xx': 3, 'tokens.issued': 2, 'api_read.4xx': 3 });
    const errors = await t.database.db.kysely.selectFrom('app_usage_errors').selectAll().where('app_id', '=', g.app.id).orderBy('id').execute();
    assert.deepEqual(errors.map((e) => [Number(e.status), e.error, e.route]), Array(3).fill([401, 'invalid_token', '/v1/users/me']));
    assert.deepEqual(await usageOf(f.publicApp.id), { 'token.2xx': 3, 'token.4xx': 1, 'tokens.issued': 1, 'tokens.refreshed': 1 }, 'no other app counted the made-up one');
  });
});

const noRedis = await sharedRedisUnavailable();

describe('app usage with the rate limit in Redis', { skip: noRedis ?? false }, () => {
  it("counts one grant's spending of its limit across two processes as the limiter does", async () => {
    const t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_API: '5/min', REDIS_URL: SHARED_REDIS_URL });
    const second = await buildApp({ config: t.config, stores: t.database.stores, clock: t.clock });
    await second.ready();
    try {
      const f = await createFixture(t);
      const tokens = await obtainTokens(t, f, { scope: 'read_profile' });
      for (const app of [t.app, second, second]) {
        assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(tokens.access_token) })).statusCode, 200);
      }
      await Promise.all([t.app.usage.flush(), second.usage.flush()]);
      const usage = await usageIn(t, f.app.id);
      assert.equal(usage['api_read.2xx'], 3);
      assert.equal(usage['api.busiest_window'], 3, 'one window of one grant, counted once across both processes');
    } finally {
      await second.close();
      await t.close();
    }
  });
});
