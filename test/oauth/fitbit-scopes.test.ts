/**
 * Fitbit clients (docs/oauth.md, "Fitbit clients"): an app asking in Fitbit's scope words goes
 * through Stride's real pages — the consent page shows Stride's words — and its token responses,
 * at the code exchange, at each refresh and at a refresh's replay, name the words it asked with and
 * the person (`user_id`); words for data Stride does not hold are granted as nothing, and a word
 * for a scope the app did not register is left out like an unticked box. Pushed requests and the
 * device grant read the words the same way; introspection keeps answering Stride's scopes.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import type { App } from '../../src/store/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { answerConsent, deviceAuthorization, poll, registerDeviceApp, signedInBrowser, typeCode } from './device-flow.js';
import {
  authorizeAndAllow,
  authorizeUrl,
  Browser,
  checkboxScopes,
  createFixture,
  createOAuthTestApp,
  encodeForm,
  formFields,
  REDIRECT_URI,
  signIn,
  tokenRequest,
  type Fixture,
} from './flow.js';

cheapPasswordHashing();

/** The page as a person reads it: without the form's hidden fields, which carry the request as the app sent it. */
const visibleText = (html: string) => html.replace(/<input type="hidden"[^>]*>/g, '');

forEachDialect('Fitbit clients: scope words at the authorization and token endpoints', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  /** A confidential app registered for what Fitbit's activity, heartrate, profile and sleep stand for. */
  let fitbitApp: App;
  let fitbitSecret: string;

  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Fitbit Port',
      redirectUris: [REDIRECT_URI],
      scopes: ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'write_sleep'],
      isPublic: false,
    });
    fitbitApp = registered.app;
    fitbitSecret = registered.clientSecret!;
  });
  after(() => t.close());

  const asFitbitApp = () => ({ client_id: fitbitApp.clientId, client_secret: fitbitSecret });

  async function signedIn(): Promise<Browser> {
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    return browser;
  }

  /** The code flow for `app` asking `scope`, allowed (less `untick`) on the consent page; the token response. */
  async function tokensFor(app: App, secret: string, scope: string, untick: string[] = []) {
    const back = await authorizeAndAllow(
      await signedIn(),
      authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI, scope, state: 'fb', prompt: 'consent' }),
      { untick },
    );
    const code = back.searchParams.get('code');
    assert.ok(code, `no code in ${back}`);
    const response = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: app.clientId, client_secret: secret });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  }

  const introspectedScope = async (token: string) =>
    (await t.app.inject({ method: 'POST', url: '/oauth2/introspect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: encodeForm({ token, ...asFitbitApp() }) })).json().scope;

  it("shows Stride's words on the consent page, and answers the words asked and the person's id", async () => {
    const scope = 'activity heartrate nutrition profile sleep';
    const page = await (await signedIn()).get(authorizeUrl({ response_type: 'code', client_id: fitbitApp.clientId, redirect_uri: REDIRECT_URI, scope, state: 'fb' }));
    assert.equal(page.status, 200, page.body.slice(0, 400));
    assert.deepEqual(checkboxScopes(page.body), ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'write_sleep']);
    for (const words of ['See your steps, distance and calories', 'See your heart rate', 'Add and change your sleep']) assert.ok(page.body.includes(words), words);
    assert.doesNotMatch(visibleText(page.body), /\bnutrition\b|\bheartrate\b/, "Fitbit's words are not shown");
    assert.match(page.body, /id="unheld-data">Fitbit Port also asked for kinds of data that Stride does not hold/);
    assert.equal(formFields(page.body, '/oauth2/authorize').scope, scope, 'the form carries the request as the app worded it');

    const tokens = await tokensFor(fitbitApp, fitbitSecret, scope);
    assert.equal(tokens.scope, scope, 'the words asked, in the order asked');
    assert.equal(tokens.user_id, f.user.id);
    const me = await t.app.inject({ url: '/v1/users/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().id, tokens.user_id, 'user_id is the id the profile answers');
    assert.equal(await introspectedScope(tokens.access_token), 'read_profile read_activity read_heartrate read_sleep write_sleep', 'introspection answers Stride\'s scopes');
  });

  it('answers a refresh in the same words, whether it repeats them or not, and replays the same answer', async () => {
    const scope = 'profile activity nutrition';
    const first = await tokensFor(fitbitApp, fitbitSecret, scope);
    const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
      tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...asFitbitApp(), ...extra });

    const second = await refresh(first.refresh_token);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().scope, scope);
    assert.equal(second.json().user_id, f.user.id);

    // As oauthlib refreshes: the words it asked with, duplicates and all.
    const third = await refresh(second.json().refresh_token, { scope: 'profile activity nutrition activity' });
    assert.equal(third.statusCode, 200, third.body);
    assert.equal(third.json().scope, scope);
    const replayed = await refresh(second.json().refresh_token, { scope: 'profile activity nutrition activity' });
    assert.deepEqual(replayed.json(), third.json(), 'a retry within the replay window gets the same answer');
    assert.equal(await introspectedScope(third.json().access_token), 'read_profile read_activity');

    // A narrowing refresh is answered in its own words; the chain keeps the grant's.
    const narrowed = await refresh(third.json().refresh_token, { scope: 'activity' });
    assert.equal(narrowed.json().scope, 'activity');
    assert.equal(await introspectedScope(narrowed.json().access_token), 'read_activity');
    const inStrideNames = await refresh(narrowed.json().refresh_token, { scope: 'read_profile' });
    assert.equal(inStrideNames.json().scope, 'read_profile');
    const whole = await refresh(inStrideNames.json().refresh_token);
    assert.equal(whole.json().scope, scope);
    // A word for a scope the token does not hold adds nothing and is not named; Stride's name for it is refused.
    const beyond = await refresh(whole.json().refresh_token, { scope: 'activity heartrate' });
    assert.equal(beyond.json().scope, 'activity');
    assert.equal(await introspectedScope(beyond.json().access_token), 'read_activity');
    const widened = await refresh(beyond.json().refresh_token, { scope: 'activity read_heartrate' });
    assert.equal(widened.statusCode, 400);
    assert.equal(widened.json().error, 'invalid_scope');
  });

  it('grants words of unheld data as nothing, and leaves out a word for a scope the app did not register or the person unticked', async () => {
    // f.app is registered for read_profile, read_activity and write_activity only.
    const page = await (await signedIn()).get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'activity heartrate weight oxygen_saturation' }));
    assert.deepEqual(checkboxScopes(page.body), ['read_activity']);
    const tokens = await tokensFor(f.app, f.secret, 'activity heartrate weight oxygen_saturation');
    assert.equal(tokens.scope, 'activity oxygen_saturation');

    const unticked = await tokensFor(f.app, f.secret, 'activity profile temperature', ['read_profile']);
    assert.equal(unticked.scope, 'activity temperature');
    const mixed = await tokensFor(f.app, f.secret, 'write_activity activity');
    assert.equal(mixed.scope, 'write_activity activity', "Stride's scope names and Fitbit's words together");
    const plain = await tokensFor(f.app, f.secret, 'read_activity read_profile');
    assert.equal(plain.scope, 'read_profile read_activity', "without Fitbit's words, Stride's scope names as ever");
    assert.equal(plain.user_id, f.user.id);
  });

  it('reads the words in pushed requests, and refuses a request that asks for nothing Stride holds or names a scope not registered', async () => {
    const push = (scope: string) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth2/par',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: encodeForm({ client_id: f.app.clientId, client_secret: f.secret, response_type: 'code', redirect_uri: REDIRECT_URI, scope }),
      });
    const pushed = await push('activity location');
    assert.equal(pushed.statusCode, 201, pushed.body);
    const back = await authorizeAndAllow(await signedIn(), authorizeUrl({ client_id: f.app.clientId, request_uri: pushed.json().request_uri }));
    const exchanged = await tokenRequest(t, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URI, client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(exchanged.json().scope, 'activity location');

    for (const [scope, description] of [
      ['nutrition social', /asks for no kind of data that Stride holds/],
      ['heartrate sleep', /asks for no kind of data that Stride holds/],
      ['steps', /unknown scope "steps"/],
      ['write_profile activity', /not registered for the scope "write_profile"/],
    ] as const) {
      const refused = await push(scope);
      assert.equal(refused.statusCode, 400, scope);
      assert.equal(refused.json().error, 'invalid_scope', scope);
      assert.match(refused.json().error_description, description);
    }
  });

  it('reads the words at the device authorization endpoint, and the device is answered in them', async () => {
    const device = await registerDeviceApp(t, f);
    const started = await deviceAuthorization(t, { client_id: device.app.clientId, scope: 'profile nutrition' });
    assert.equal(started.statusCode, 200, started.body);
    const browser = await signedInBrowser(t, f);
    const consent = await typeCode(browser, started.json().user_code);
    assert.equal(consent.status, 200, consent.body.slice(0, 400));
    assert.deepEqual(checkboxScopes(consent.body), ['read_profile']);
    assert.match(consent.body, /id="unheld-data"/);
    assert.doesNotMatch(visibleText(consent.body), /\bnutrition\b/);
    assert.equal((await answerConsent(browser, consent.body, 'allow')).status, 200);
    const tokens = await poll(t, device.app.clientId, started.json().device_code);
    assert.equal(tokens.statusCode, 200, tokens.body);
    assert.equal(tokens.json().scope, 'profile nutrition');
    assert.equal(tokens.json().user_id, f.user.id);
  });
});
