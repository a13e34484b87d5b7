/** The whole authorization code flow over HTTP: sign-in, consent, code, tokens, a protected call. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import {
  authorizeUrl,
  Browser,
  checkboxScopes,
  createFixture,
  createOAuthTestApp,
  exchangeCode,
  formFields,
  obtainCode,
  PROTECTED_PATH,
  REDIRECT_URI,
  signIn,
  type Fixture,
} from './flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('authorization code flow end to end', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('signs up, is sent to login, consents, exchanges the code and calls a protected route', async () => {
    const browser = new Browser(t.app);
    const url = authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_url: REDIRECT_URI, state: 'xyz <&>', scope: 'read_profile read_activity' });

    // Signed out: the authorize endpoint sends the browser to the login page, with the way back.
    const first = await browser.get(url);
    assert.equal(first.status, 302);
    const login = first.location();
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('return_to'), url);

    // A new account via the sign-up page, then back to the request.
    const loginPage = await browser.get(login.pathname + login.search);
    assert.match(loginPage.body, /href="\/signup\?return_to=/);
    const signupPage = await browser.get(`/signup?return_to=${encodeURIComponent(url)}`);
    assert.equal(signupPage.status, 200);
    const signedUp = await browser.post('/signup', {
      ...formFields(signupPage.body, '/signup'),
      email: 'new.walker@example.com',
      password: 'a long enough password',
      display_name: 'New Walker',
    });
    // Sign-up answers alike whether or not the email was taken: on to sign in, with the way back.
    assert.equal(signedUp.status, 303);
    assert.equal(signedUp.location().pathname, '/login');
    assert.equal(signedUp.location().searchParams.get('return_to'), url);
    assert.equal(browser.cookies.has('stride_session'), false);
    const signedIn = await signIn(browser, 'new.walker@example.com', 'a long enough password', url);
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.location().pathname + signedIn.location().search, url);

    // The consent page names the app, its developer, the redirect host and each scope in words.
    const consent = await browser.get(url);
    assert.equal(consent.status, 200);
    assert.match(consent.body, /Pace Coach/);
    assert.match(consent.body, /Ada Developer/);
    assert.match(consent.body, /client\.example/);
    assert.match(consent.body, /See your profile/);
    assert.match(consent.body, /See your steps, distance and calories/);
    assert.doesNotMatch(consent.body, /Add and change your steps, distance and calories/);
    assert.deepEqual(checkboxScopes(consent.body), ['read_profile', 'read_activity']);

    const decision = await browser.post('/oauth2/authorize', {
      ...formFields(consent.body, '/oauth2/authorize'),
      granted_scope: ['read_profile', 'read_activity'],
      decision: 'allow',
    });
    assert.equal(decision.status, 303);
    const back = decision.location();
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('state'), 'xyz <&>');
    assert.equal(back.searchParams.get('iss'), t.config.publicUrl);
    const code = back.searchParams.get('code')!;
    assert.match(code, /^sac_/);

    const token = await exchangeCode(t, f, code);
    assert.equal(token.statusCode, 200);
    assert.equal(token.headers['cache-control'], 'no-store');
    assert.equal(token.headers.pragma, 'no-cache');
    const body = token.json();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type', 'user_id']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 2592000);
    assert.equal(body.scope, 'read_profile read_activity');

    const call = await t.app.inject({ method: 'GET', url: PROTECTED_PATH, headers: { authorization: `Bearer ${body.access_token}` } });
    assert.equal(call.statusCode, 200);
    assert.deepEqual(call.json().scopes, ['read_profile', 'read_activity']);

    // The token lacks write_activity: 403 insufficient_scope naming it.
    const write = await t.app.inject({ method: 'POST', url: PROTECTED_PATH, headers: { authorization: `Bearer ${body.access_token}` } });
    assert.equal(write.statusCode, 403);
    assert.equal(write.json().error, 'insufficient_scope');
    assert.match(String(write.headers['www-authenticate']), /error="insufficient_scope", scope="write_activity"/);
  });

  it('answers 401 invalid_token with a Bearer challenge for missing and unknown tokens', async () => {
    const none = await t.app.inject({ method: 'GET', url: PROTECTED_PATH });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().error, 'invalid_token');
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="stride", DPoP algs="ES256 ES384 EdDSA Ed25519 PS256 RS256"');
    const unknown = await t.app.inject({ method: 'GET', url: PROTECTED_PATH, headers: { authorization: 'Bearer sat_nope' } });
    assert.equal(unknown.statusCode, 401);
    assert.match(String(unknown.headers['www-authenticate']), /error="invalid_token"/);
  });

  it('lets the user untick scopes; only the ticked ones are granted', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, f.password);
    const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, prompt: 'consent' }));
    assert.deepEqual(checkboxScopes(page.body), ['read_profile', 'read_activity', 'write_activity']);
    const decision = await browser.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: ['read_activity'], decision: 'allow' });
    const code = decision.location().searchParams.get('code')!;
    const token = await exchangeCode(t, f, code);
    assert.equal(token.json().scope, 'read_activity');
  });

  it('state is echoed on success', async () => {
    const { redirect } = await obtainCode(t, f, { state: 'a b+c/é' });
    assert.equal(redirect.searchParams.get('state'), 'a b+c/é');
  });
});
