/**
 * fitbit-node, unmodified, against Stride listening on 127.0.0.1: only its URLs pointed at Stride
 * (the library writes api.fitbit.com into its OAuth settings and its `getUrl`). The code exchange
 * through Stride's real sign-in and consent pages, `get` of the profile, a daily series, a day of
 * heart rate by minute, sleep and weight — each equal to what `/v1/…` answers — and
 * `refreshAccessToken`.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, it } from 'node:test';
import FitbitApiClient from 'fitbit-node';
import { registerApp } from '../../../src/domain/apps.js';
import type { TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { cheapPasswordHashing } from '../../support/passwords.js';
import { bearer } from '../../support/tokens.js';
import { authorizeAndAllow, Browser, createFixture, signIn, type Fixture } from '../../oauth/flow.js';
import { listeningStride } from '../../oauth/listening.js';
import { writeLife } from './support-person.js';

cheapPasswordHashing();

/** The OAuth library fitbit-node itself uses, to give it Stride's hosts with its own options. */
const simpleOauth2 = createRequire(createRequire(import.meta.url).resolve('fitbit-node'))('simple-oauth2') as { create(options: object): unknown };

const REDIRECT_URI = 'http://127.0.0.1:9/fitbit-callback';
const SCOPES = ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'read_body'];

forEachDialect('fitbit-node against Stride', (dialect) => {
  let t: TestApp;
  let origin: string;
  let f: Fixture;
  let client: FitbitApiClient;

  before(async () => {
    const listening = await listeningStride(dialect);
    t = listening.t;
    origin = listening.issuer.origin;
    f = await createFixture(t);
    await writeLife(t, f.user.id, 'night_shift_worker', 8);
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: 'Fitbit Node App', redirectUris: [REDIRECT_URI], scopes: SCOPES, isPublic: false });
    client = new FitbitApiClient({ clientId: registered.app.clientId, clientSecret: registered.clientSecret!, apiVersion: '1' });
    // The base URL, and nothing else: the library's own OAuth settings with Stride's hosts.
    (client as unknown as { oauth2: unknown }).oauth2 = simpleOauth2.create({
      client: { id: registered.app.clientId, secret: registered.clientSecret! },
      auth: { tokenHost: origin, tokenPath: '/oauth2/token', revokePath: '/oauth2/revoke', authorizeHost: origin, authorizePath: '/oauth2/authorize' },
      options: { useBasicAuthorizationHeader: true },
    });
    const getUrl = client.getUrl.bind(client);
    client.getUrl = (path, userId) => getUrl(path, userId).replace('https://api.fitbit.com', origin);
  });
  after(() => t.close());

  it('exchanges a code, reads every kind as /v1 answers it, and refreshes', async () => {
    const authorizeUrl = new URL(client.getAuthorizeUrl(SCOPES.join(' '), REDIRECT_URI, 'consent', 'xyz'));
    assert.equal(authorizeUrl.origin, origin);
    const browser = new Browser(null, origin);
    const toLogin = await browser.get(authorizeUrl.pathname + authorizeUrl.search);
    const signedIn = await signIn(browser, f.user.email, f.password, toLogin.location().searchParams.get('return_to')!);
    const back = await authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
    assert.equal(back.searchParams.get('state'), 'xyz');

    const tokens = (await client.getAccessToken(back.searchParams.get('code')!, REDIRECT_URI)) as { access_token: string; refresh_token: string; expires_in: number; scope: string };
    assert.equal(tokens.scope, SCOPES.join(' '));

    const [profile] = (await client.get('/profile.json', tokens.access_token)) as unknown as [{ user: { encodedId: string; timezone: string } }];
    assert.deepEqual([profile.user.encodedId, profile.user.timezone], [f.user.id, 'Asia/Kolkata']);

    const v1 = async (path: string) => (await t.app.inject({ method: 'GET', url: path, headers: bearer(tokens.access_token) })).json();
    const today = new Date(t.clock() * 1000 + 5.5 * 3600_000).toISOString().slice(0, 10);
    const [steps] = (await client.get(`/activities/steps/date/${today}/7d.json`, tokens.access_token)) as unknown as [{ 'activities-steps': Array<{ value: string }> }];
    const { steps: v1Steps } = (await v1(`/v1/users/me/activities/steps/?granularity=day&start_time=${Math.floor(new Date(`${today}T00:00:00+05:30`).getTime() / 1000) - 6 * 86400}&end_time=${t.clock()}`)) as { steps: Array<{ value: number }> };
    assert.deepEqual(steps['activities-steps'].map((day) => Number(day.value)), v1Steps.map((bucket) => bucket.value));

    const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
    const dayStart = Math.floor(new Date(`${yesterday}T00:00:00+05:30`).getTime() / 1000);
    const [heart] = (await client.get(`/activities/heart/date/${yesterday}/1d/1min.json`, tokens.access_token, undefined, { 'Accept-Language': 'en_US' })) as unknown as [{ 'activities-heart-intraday': { dataset: Array<{ value: number }> } }];
    const { heartrate } = (await v1(`/v1/users/me/heartrate/?granularity=minute&start_time=${dayStart}&end_time=${dayStart + 86400}`)) as { heartrate: Array<{ avg: number | null }> };
    assert.deepEqual(heart['activities-heart-intraday'].dataset.map((entry) => entry.value), heartrate.filter((m) => m.avg !== null).map((m) => m.avg));

    const versioned = new FitbitApiClient({ clientId: 'unused', clientSecret: 'unused', apiVersion: '1.2' });
    const getUrl = versioned.getUrl.bind(versioned);
    versioned.getUrl = (path, userId) => getUrl(path, userId).replace('https://api.fitbit.com', origin);
    const [sleep] = (await versioned.get(`/sleep/date/${today}.json`, tokens.access_token)) as unknown as [{ sleep: Array<{ minutesAsleep: number; type: string }> }];
    const { sleep: v1Sleep } = (await v1(`/v1/users/me/sleep/?start_date=${today}&end_date=${today}`)) as { sleep: Array<{ minutes_asleep: number }> };
    assert.deepEqual(sleep.sleep.map((log) => log.minutesAsleep), v1Sleep.map((night) => night.minutes_asleep).reverse());

    const [weights, response] = (await client.get(`/body/log/weight/date/${today}/7d.json`, tokens.access_token)) as unknown as [{ weight: Array<{ weight: number }> }, { headers: Record<string, string> }];
    const weekBefore = new Date(Date.parse(today) - 6 * 86_400_000).toISOString().slice(0, 10);
    const { weight: v1Weights } = (await v1(`/v1/users/me/body/weight/?start_date=${weekBefore}&end_date=${today}`)) as { weight: Array<{ kg: number }> };
    assert.ok(v1Weights.length > 0, 'a morning of the week with a weighing');
    assert.deepEqual(weights.weight.map((log) => log.weight), v1Weights.map((w) => w.kg));
    assert.equal(response.headers['fitbit-rate-limit-limit'], undefined, 'RATE_LIMIT=off in this test: no Fitbit limit to announce');

    const refreshed = (await client.refreshAccessToken(tokens.access_token, tokens.refresh_token)) as { access_token: string; refresh_token: string };
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    const [again] = (await client.get('/profile.json', refreshed.access_token)) as unknown as [{ user: { encodedId: string } }];
    assert.equal(again.user.encodedId, f.user.id);
  });
});
