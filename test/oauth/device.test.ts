/**
 * The device authorization grant (RFC 8628; docs/oauth.md "Device authorization"): the device
 * authorization endpoint, every polling answer, the /device page's code matching and attempt
 * limits, and apps without the grant type.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { authorizeUrl, Browser, createFixture, createOAuthTestApp, formFields, PROTECTED_PATH, signIn, tokenRequest, type Fixture } from './flow.js';
import { answerConsent, deviceAuthorization, poll, registerDeviceApp, signedInBrowser, typeCode, DEVICE_CODE_GRANT_TYPE } from './device-flow.js';

cheapPasswordHashing();

forEachDialect('device authorization grant', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let clientId: string;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
    clientId = (await registerDeviceApp(t, f)).app.clientId;
  });
  after(() => t.close());

  async function start(scope?: string) {
    const response = await deviceAuthorization(t, { client_id: clientId, ...(scope !== undefined && { scope }) });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
  }

  it('answers a device code, a user code of unambiguous letters, the verification URIs, expires_in and interval', async () => {
    const answer = await start();
    assert.match(answer.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(answer.verification_uri, 'http://stride.test/device');
    assert.equal(answer.verification_uri_complete, `http://stride.test/device?user_code=${answer.user_code}`);
    assert.equal(answer.expires_in, 600);
    assert.equal(answer.interval, 5);
    const stored = JSON.stringify(await t.database.db.kysely.selectFrom('device_codes').selectAll().execute());
    assert.ok(!stored.includes(answer.device_code) && !stored.includes(answer.user_code.replace('-', '')), 'codes are stored hashed');
  });

  it('stores no second request with a user code already taken (the endpoint then draws another)', async () => {
    const answer = await start();
    const { db } = t.database;
    const taken = await db.kysely.selectFrom('device_codes').selectAll().orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    const again = { ...taken, device_code_hash: `${taken.device_code_hash}-again` };
    assert.equal(await t.database.stores.deviceCodes.insert(again), false);
    assert.equal((await db.kysely.selectFrom('device_codes').select('device_code_hash').where('device_code_hash', '=', again.device_code_hash).execute()).length, 0);
    // The first request is whole: its person can still type its code.
    assert.equal((await t.database.stores.deviceCodes.findByUserCode(taken.user_code_hash))?.device_code_hash, taken.device_code_hash);
    assert.match(answer.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
  });

  it('advertises the endpoint and the grant type in the metadata', async () => {
    const metadata = (await t.app.inject({ url: '/.well-known/oauth-authorization-server' })).json();
    assert.equal(metadata.device_authorization_endpoint, 'http://stride.test/oauth2/device_authorization');
    assert.ok(metadata.grant_types_supported.includes(DEVICE_CODE_GRANT_TYPE));
  });

  it('refuses an unknown scope, a client of another kind of authentication, and a body that is not a form', async () => {
    const unknownScope = await deviceAuthorization(t, { client_id: clientId, scope: 'read_everything' });
    assert.equal(unknownScope.statusCode, 400);
    assert.equal(unknownScope.json().error, 'invalid_scope');
    const unknownClient = await deviceAuthorization(t, { client_id: 'sc_nobody' });
    assert.equal(unknownClient.statusCode, 401);
    assert.equal(unknownClient.json().error, 'invalid_client');
    const json = await t.app.inject({ method: 'POST', url: '/oauth2/device_authorization', payload: { client_id: clientId } });
    assert.equal(json.statusCode, 415);
  });

  it('refuses an app without the device grant type with unauthorized_client, at both endpoints', async () => {
    // The fixture's confidential app has the grant types every app had before: code and refresh.
    const refused = await deviceAuthorization(t, { client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error, 'unauthorized_client');
    const polled = await tokenRequest(t, { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: 'sdc_x', client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(polled.json().error, 'unauthorized_client');
  });

  it('answers authorization_pending, then slow_down (raising the interval by 5 s) to a device polling too fast', async () => {
    const { device_code } = await start();
    const first = await poll(t, clientId, device_code);
    assert.equal(first.statusCode, 400);
    assert.equal(first.json().error, 'authorization_pending');
    const tooFast = await poll(t, clientId, device_code);
    assert.equal(tooFast.json().error, 'slow_down');
    t.clock.advance(5);
    // The interval is now 10 s: 5 s later is still too fast.
    assert.equal((await poll(t, clientId, device_code)).json().error, 'slow_down');
    t.clock.advance(15);
    assert.equal((await poll(t, clientId, device_code)).json().error, 'authorization_pending');
    t.clock.advance(15);
    assert.equal((await poll(t, clientId, device_code)).json().error, 'authorization_pending');
  });

  it('takes the code in any case and without the hyphen, and issues tokens once after approval', async () => {
    const { device_code, user_code } = await start('read_profile read_activity');
    const browser = await signedInBrowser(t, f);
    const consent = await typeCode(browser, ` ${user_code.replace('-', '').toLowerCase()} `);
    assert.equal(consent.status, 200, consent.body.slice(0, 400));
    assert.match(consent.body, /Living Room Scale/);
    assert.match(consent.body, new RegExp(user_code));
    const answered = await answerConsent(browser, consent.body, 'allow', ['read_activity']);
    assert.equal(answered.status, 200);
    assert.match(answered.body, /is connected/);

    const tokens = await poll(t, clientId, device_code);
    assert.equal(tokens.statusCode, 200, tokens.body);
    assert.equal(tokens.headers['cache-control'], 'no-store');
    const body = tokens.json();
    assert.equal(body.scope, 'read_profile', 'the unticked scope is not granted');
    const profile = await t.app.inject({ url: PROTECTED_PATH, headers: { authorization: `Bearer ${body.access_token}` } });
    assert.equal(profile.statusCode, 200);
    assert.equal(profile.json().user_id, f.user.id);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: clientId });
    assert.equal(refreshed.statusCode, 200, refreshed.body);

    t.clock.advance(5);
    const again = await poll(t, clientId, device_code);
    assert.equal(again.json().error, 'invalid_grant', 'the device code is used up');
    // The code cannot be typed again either.
    assert.equal((await typeCode(browser, user_code)).status, 400);
  });

  it('refuses a consent answer without this session\'s CSRF token, approving nothing; the device pages cannot be framed', async () => {
    const { device_code, user_code } = await start();
    const browser = await signedInBrowser(t, f);
    const consent = await typeCode(browser, user_code);
    assert.equal(consent.status, 200);
    for (const page of [consent, await browser.get('/device')]) {
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    }
    const fields = formFields(consent.body, '/device/consent');
    // A page elsewhere posting the form with the victim's cookies: no token, or one of another session.
    const other = formFields((await (await signedInBrowser(t, f)).get('/device')).body, '/device');
    for (const csrf of [undefined, other.csrf_token, '']) {
      const form: Record<string, string> = { ...fields, decision: 'allow', granted_scope: 'read_profile' };
      if (csrf === undefined) delete form.csrf_token;
      else form.csrf_token = csrf;
      const answered = await browser.post('/device/consent', form);
      assert.equal(answered.status, 403, `csrf_token ${JSON.stringify(csrf)}`);
    }
    t.clock.advance(5);
    assert.equal((await poll(t, clientId, device_code)).json().error, 'authorization_pending', 'nothing was approved');
  });

  it('answers access_denied after the person denied, and unticking every scope denies', async () => {
    const browser = await signedInBrowser(t, f);
    for (const untick of [[], ['read_profile', 'read_activity']]) {
      const { device_code, user_code } = await start();
      const consent = await typeCode(browser, user_code);
      const decision = untick.length === 0 ? 'deny' : 'allow';
      const answered = await answerConsent(browser, consent.body, decision, untick);
      assert.match(answered.body, /You denied/);
      const polled = await poll(t, clientId, device_code);
      assert.equal(polled.json().error, 'access_denied');
    }
  });

  it('denies an approval not yet redeemed once the person withdraws one of its scopes; one within what is still granted stays', async () => {
    const app = (await registerDeviceApp(t, f)).app;
    const begin = async (scope: string) => (await deviceAuthorization(t, { client_id: app.clientId, scope })).json() as { device_code: string; user_code: string };
    const browser = await signedInBrowser(t, f);
    const allow = async (userCode: string, untick: string[] = []) => {
      const answered = await answerConsent(browser, (await typeCode(browser, userCode)).body, 'allow', untick);
      assert.match(answered.body, /is connected/);
    };
    const both = await begin('read_profile read_activity');
    await allow(both.user_code);
    const profileOnly = await begin('read_profile');
    await allow(profileOnly.user_code);
    // Before either device polls, the person answers a third request of the app without read_activity.
    const narrowing = await begin('read_profile read_activity');
    await allow(narrowing.user_code, ['read_activity']);
    assert.equal((await t.database.stores.grants.find(f.user.id, app.id))!.scope, 'read_profile');

    assert.equal((await poll(t, app.clientId, both.device_code)).json().error, 'access_denied');
    for (const { device_code } of [profileOnly, narrowing]) {
      const tokens = await poll(t, app.clientId, device_code);
      assert.equal(tokens.statusCode, 200, tokens.body);
      assert.equal(tokens.json().scope, 'read_profile');
    }
  });

  it('no longer takes a code once the app lost the device grant, and gives a device-only app no authorization code', async () => {
    const app = (await registerDeviceApp(t, f)).app;
    const { device_code, user_code } = (await deviceAuthorization(t, { client_id: app.clientId })).json() as { device_code: string; user_code: string };
    await t.database.stores.apps.update(app.id, { grantTypes: ['authorization_code', 'refresh_token'] }, t.clock());
    const browser = await signedInBrowser(t, f);
    const typed = await typeCode(browser, user_code);
    assert.equal(typed.status, 400);
    assert.match(typed.body, /not right, or it has expired/);
    assert.equal(await t.database.stores.grants.find(f.user.id, app.id), undefined, 'nothing was granted');
    assert.equal((await poll(t, app.clientId, device_code)).json().error, 'unauthorized_client');

    // A device-only app (a scale, say) is not given a code at the authorization endpoint (RFC 6749 §4.1.2.1).
    await t.database.stores.apps.update(app.id, { grantTypes: [DEVICE_CODE_GRANT_TYPE] }, t.clock());
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = await browser.get(authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: 'https://scale.example/callback', state: 'st', code_challenge: challenge, code_challenge_method: 'S256' }));
    assert.doesNotMatch(authorize.body, /name="decision"/, 'no consent page');
    const answered = authorize.status === 303 || authorize.status === 302 ? authorize.location().searchParams.get('error') : authorize.body;
    assert.match(String(answered), /unauthorized_client/);
  });

  it('answers expired_token once the code expired, and the page no longer takes it', async () => {
    const { device_code, user_code } = await start();
    t.clock.advance(601);
    assert.equal((await poll(t, clientId, device_code)).json().error, 'expired_token');
    const browser = await signedInBrowser(t, f);
    const typed = await typeCode(browser, user_code);
    assert.equal(typed.status, 400);
    assert.match(typed.body, /not right, or it has expired/);
  });

  it("refuses another client's device code and an unknown one with invalid_grant", async () => {
    const { device_code } = await start();
    const other = (await registerDeviceApp(t, f)).app.clientId;
    assert.equal((await poll(t, other, device_code)).json().error, 'invalid_grant');
    assert.equal((await poll(t, clientId, 'sdc_unknown')).json().error, 'invalid_grant');
    const missing = await tokenRequest(t, { grant_type: DEVICE_CODE_GRANT_TYPE, client_id: clientId });
    assert.equal(missing.json().error, 'invalid_request');
  });

  it('sends a signed-out person to sign in and back to /device with the code', async () => {
    const { user_code } = await start();
    const page = await t.app.inject({ url: `/device?user_code=${user_code}` });
    assert.equal(page.statusCode, 302);
    const location = new URL(page.headers.location as string, 'http://stride.test');
    assert.equal(location.pathname, '/login');
    assert.equal(location.searchParams.get('return_to'), `/device?user_code=${user_code}`);
  });

  it('refuses a typed code without the CSRF token', async () => {
    const browser = await signedInBrowser(t, f);
    const { user_code } = await start();
    const refused = await browser.post('/device', { user_code });
    assert.equal(refused.status, 403);
  });
});

forEachDialect('device page attempt limits', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '6/min', RATE_LIMIT_LOGIN_ACCOUNT: '3/15min' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('limits the attempts per code, then per address', async () => {
    const browser = await signedInBrowser(t, f);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await typeCode(browser, 'BCDF-GHJK')).status);
    assert.deepEqual(statuses, [400, 400, 400, 429], 'the fourth try of one code is refused');
    const another: number[] = [];
    for (let i = 0; i < 3; i++) another.push((await typeCode(browser, `BCDF-GHJ${'LMN'[i]}`)).status);
    assert.deepEqual(another, [400, 400, 429], 'the address has spent its six attempts');
  });
});

forEachDialect('device page attempt limit over every address (RFC 8628 §5.1)', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '100/min', TRUST_PROXY: 'loopback', RATE_LIMIT_DEVICE_CODES: '5/min' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('refuses guesses spread over many addresses and codes once the server-wide budget is spent, which strangers cannot spend', async () => {
    const browser = await signedInBrowser(t, f);
    const page = await browser.get('/device');
    const form = formFields(page.body, '/device');
    // First, from ten addresses: forms without a session, and this session's without its CSRF
    // token. Each refused, none counted: else anyone could keep everyone from connecting a device.
    for (let i = 0; i < 10; i++) {
      const address = { 'x-forwarded-for': `192.0.2.${i + 1}` };
      assert.equal((await new Browser(t.app).post('/device', { user_code: 'BCDF-GHJK' }, address)).status, 403);
      assert.equal((await browser.post('/device', { user_code: 'BCDF-GHJK' }, address)).status, 403);
      assert.equal((await new Browser(t.app).post('/device/consent', { user_code: 'BCDF-GHJK', decision: 'allow' }, address)).status, 403);
    }
    const guess = (code: string, address: string) => browser.post('/device', { ...form, user_code: code }, { 'x-forwarded-for': address });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await guess(`BCDF-GHJ${'KLMNP'[i]}`, `203.0.113.${i + 1}`)).status);
    assert.deepEqual(statuses, [400, 400, 400, 400, 400], 'each address and each code tried once');
    const sixth = await guess('BCDF-GHJQ', '198.51.100.7');
    assert.equal(sixth.status, 429, 'a fresh address with a fresh code');
    assert.ok(Number(sixth.headers['retry-after']) > 0);
    // The consent form takes a user code too: it shares the budget.
    const consent = await browser.post('/device/consent', { ...form, user_code: 'BCDF-GHJR', decision: 'allow', granted_scope: 'read_profile' }, { 'x-forwarded-for': '198.51.100.8' });
    assert.equal(consent.status, 429);
  });
});

forEachDialect('device page attempt limit per account', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '3/min', TRUST_PROXY: 'loopback' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('limits the codes one account tries, whatever addresses they come from; another account is not held back', async () => {
    const guesser = await signedInBrowser(t, f);
    const form = formFields((await guesser.get('/device')).body, '/device');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await guesser.post('/device', { ...form, user_code: `BCDF-GHJ${'KLMN'[i]}` }, { 'x-forwarded-for': `203.0.113.${i + 1}` })).status);
    assert.deepEqual(statuses, [400, 400, 400, 429]);
    const other = new Browser(t.app);
    assert.equal((await signIn(other, f.developer.email, f.password)).status, 303);
    const otherForm = formFields((await other.get('/device')).body, '/device');
    assert.equal((await other.post('/device', { ...otherForm, user_code: 'BCDF-GHJP' }, { 'x-forwarded-for': '198.51.100.9' })).status, 400);
  });
});
