/** The authorization request (SPEC §3.1): redirect URI rules, errors, consent, CSRF, headers. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import {
  authorizeAndAllow,
  authorizeUrl,
  Browser,
  createFixture,
  createOAuthTestApp,
  exchangeCode,
  formFields,
  obtainCode,
  OTHER_REDIRECT_URI,
  pkce,
  REDIRECT_URI,
  refresh,
  signIn,
  useToken,
  type Fixture,
} from './flow.js';

forEachDialect('authorization endpoint', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let browser: Browser;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
    browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
  });
  after(() => t.close());

  const base = () => ({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, state: 's1' });

  /** An error page: status 400, HTML, and never a redirect. */
  async function assertErrorPage(params: Record<string, string | undefined>, pattern: RegExp) {
    const response = await browser.get(authorizeUrl(params));
    assert.equal(response.status, 400);
    assert.equal(response.headers.location, undefined);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, pattern);
  }

  it('shows an error page, not a redirect, for redirect URI variants that are not registered exactly', async () => {
    for (const variant of [
      `${REDIRECT_URI}/`,
      REDIRECT_URI.toUpperCase(),
      'https://CLIENT.example/callback',
      `${REDIRECT_URI}?extra=1`,
      `${REDIRECT_URI}#frag`,
      'https://client.example/callback/../callback',
      'https://evil.example/callback',
      'https://client.example.evil.example/callback',
    ]) {
      await assertErrorPage({ ...base(), redirect_uri: variant }, /not one registered for this app/);
    }
  });

  it('refuses redirect_url and redirect_uri that disagree, and a missing redirect URI', async () => {
    await assertErrorPage({ ...base(), redirect_url: OTHER_REDIRECT_URI }, /both sent and differ/);
    await assertErrorPage({ ...base(), redirect_uri: undefined }, /no redirect_uri/);
  });

  it('accepts redirect_url (seed name) alone and both names when they agree', async () => {
    const seedName = await browser.get(authorizeUrl({ ...base(), redirect_uri: undefined, redirect_url: OTHER_REDIRECT_URI }));
    assert.equal(seedName.status, 200);
    const both = await browser.get(authorizeUrl({ ...base(), redirect_url: REDIRECT_URI }));
    assert.equal(both.status, 200);
  });

  it('keeps the query of a registered redirect URI and adds the code to it', async () => {
    const back = await authorizeAndAllow(browser, authorizeUrl({ ...base(), redirect_uri: OTHER_REDIRECT_URI, prompt: 'consent' }));
    assert.equal(back.searchParams.get('x'), '1');
    assert.ok(back.searchParams.get('code'));
    const token = await exchangeCode(t, f, back.searchParams.get('code')!, { redirect_uri: OTHER_REDIRECT_URI });
    assert.equal(token.statusCode, 200);
  });

  it('shows an error page for an unknown or missing client_id', async () => {
    await assertErrorPage({ ...base(), client_id: 'no-such-client' }, /No app is registered/);
    await assertErrorPage({ ...base(), client_id: undefined }, /no client_id/);
  });

  it('escapes app-controlled text on the consent page', async () => {
    const { registerApp } = await import('../../src/domain/apps.js');
    const { app } = await registerApp(t.database.db.kysely, t.clock, f.developer.id, {
      name: '<script>alert(1)</script> & "co"',
      redirectUris: [REDIRECT_URI],
      scopes: ['read_profile'],
      isPublic: false,
    });
    const page = await browser.get(authorizeUrl({ ...base(), client_id: app.clientId, state: '"><img src=x onerror=alert(1)>' }));
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.body, /<script>alert/);
    assert.doesNotMatch(page.body, /<img src=x/);
    assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;co&quot;/);
  });

  /** Other errors go back to the app with error, error_description and state (RFC 6749 §4.1.2.1). */
  async function assertRedirectError(params: Record<string, string | undefined>, error: string) {
    const response = await browser.get(authorizeUrl(params));
    assert.equal(response.status, 302, response.body.slice(0, 300));
    const back = response.location();
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('error'), error);
    assert.ok(back.searchParams.get('error_description'));
    assert.equal(back.searchParams.get('state'), params.state ?? null);
    assert.equal(back.searchParams.get('code'), null);
  }

  it('redirects errors other than client and redirect URI to the app, with state', async () => {
    await assertRedirectError({ ...base(), response_type: 'token' }, 'unsupported_response_type');
    await assertRedirectError({ ...base(), response_type: undefined }, 'invalid_request');
    await assertRedirectError({ ...base(), scope: 'read_profile fly_to_moon' }, 'invalid_scope');
    await assertRedirectError({ ...base(), scope: 'write_profile' }, 'invalid_scope'); // not registered by this app
    await assertRedirectError({ ...base(), code_challenge: pkce().challenge, code_challenge_method: 'plain' }, 'invalid_request');
    await assertRedirectError({ ...base(), code_challenge: pkce().challenge }, 'invalid_request');
    await assertRedirectError({ ...base(), code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request');
    await assertRedirectError({ ...base(), state: undefined, response_type: 'token' }, 'unsupported_response_type');
  });

  it('refuses a public client without PKCE', async () => {
    const response = await browser.get(authorizeUrl({ response_type: 'code', client_id: f.publicApp.clientId, redirect_uri: 'com.example.walker:/cb', state: 'p' }));
    assert.equal(response.status, 302);
    const back = response.location();
    assert.equal(back.protocol, 'com.example.walker:');
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.match(back.searchParams.get('error_description')!, /PKCE/);
  });

  it('Deny, or unticking every scope, sends access_denied with state', async () => {
    for (const options of [{ decision: 'deny' }, { untick: ['read_profile', 'read_activity', 'write_activity'] }]) {
      const back = await authorizeAndAllow(browser, authorizeUrl({ ...base(), state: 'deny-me', prompt: 'consent' }), options);
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), 'deny-me');
      assert.equal(back.searchParams.get('code'), null);
    }
  });

  it('refuses a consent POST without or with a wrong CSRF token', async () => {
    const page = await browser.get(authorizeUrl({ ...base(), prompt: 'consent' }));
    const fields = formFields(page.body, '/oauth2/authorize');
    const { csrf_token: token, ...withoutToken } = fields;
    assert.ok(token);
    for (const form of [withoutToken, { ...withoutToken, csrf_token: 'forged' }, { ...withoutToken, csrf_token: `${token}x` }]) {
      const response = await browser.post('/oauth2/authorize', { ...form, granted_scope: ['read_profile'], decision: 'allow' });
      assert.equal(response.status, 403);
      assert.equal(response.headers.location, undefined);
    }
    // Another user's token is not valid for this session either.
    const other = new Browser(t.app);
    await signIn(other, f.developer.email, f.password);
    const forged = await other.post('/oauth2/authorize', { ...fields, granted_scope: ['read_profile'], decision: 'allow' });
    assert.equal(forged.status, 403);
    // A consent POST without any session is refused too.
    const anonymous = await new Browser(t.app).post('/oauth2/authorize', { ...fields, decision: 'allow' });
    assert.equal(anonymous.status, 403);
  });

  it('re-validates the consent form server-side (tampered redirect URI or scope)', async () => {
    const page = await browser.get(authorizeUrl({ ...base(), scope: 'read_profile', prompt: 'consent' }));
    const fields = formFields(page.body, '/oauth2/authorize');
    const evil = await browser.post('/oauth2/authorize', { ...fields, redirect_uri: 'https://evil.example/cb', granted_scope: ['read_profile'], decision: 'allow' });
    assert.equal(evil.status, 400);
    assert.equal(evil.headers.location, undefined);
    // A ticked scope that was not requested is not granted.
    const wider = await browser.post('/oauth2/authorize', { ...fields, granted_scope: ['read_profile', 'write_activity'], decision: 'allow' });
    const token = await exchangeCode(t, f, wider.location().searchParams.get('code')!);
    assert.equal(token.json().scope, 'read_profile');
  });

  it('remembers consent for the same scopes, asks again for more, and always with prompt=consent', async () => {
    const other = new Browser(t.app);
    await signIn(other, f.developer.email, f.password);
    const params = { ...base(), scope: 'read_profile' };
    const first = await other.get(authorizeUrl(params));
    assert.equal(first.status, 200, 'consent page the first time');
    await authorizeAndAllow(other, authorizeUrl(params));

    const again = await other.get(authorizeUrl({ ...params, state: 'again' }));
    assert.equal(again.status, 302, 'remembered: straight back to the app');
    assert.ok(again.location().searchParams.get('code'));
    assert.equal(again.location().searchParams.get('state'), 'again');
    assert.equal(again.location().searchParams.get('iss'), t.config.publicUrl);

    const more = await other.get(authorizeUrl({ ...params, scope: 'read_profile read_activity' }));
    assert.equal(more.status, 200, 'a wider scope set asks again');
    const forced = await other.get(authorizeUrl({ ...params, prompt: 'consent' }));
    assert.equal(forced.status, 200, 'prompt=consent always asks');
  });

  it('consent given again with fewer scopes ends the codes and tokens that carry a dropped scope, at once', async () => {
    const both = { scope: 'read_profile read_activity', prompt: 'consent' };
    const first = await obtainCode(t, f, both);
    const wide = (await exchangeCode(t, f, first.code)).json();
    assert.equal(wide.scope, 'read_profile read_activity');
    // A narrowed access token (RFC 6749 §6); its refresh token keeps the full scope.
    const narrow = (await refresh(t, f, wide.refresh_token, { scope: 'read_profile' })).json();
    assert.equal(narrow.scope, 'read_profile');
    const pending = await obtainCode(t, f, both, first.browser);

    const url = authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, state: 'narrow', ...both });
    const narrowed = await authorizeAndAllow(first.browser, url, { untick: ['read_activity'] });
    assert.equal(await useToken(t, wide.access_token), 401, 'an access token with a dropped scope ends');
    assert.equal(await useToken(t, narrow.access_token), 200, 'one whose scopes are all still granted keeps working');
    assert.equal((await refresh(t, f, narrow.refresh_token)).json().error, 'invalid_grant', 'the refresh token carried the dropped scope');
    assert.equal((await exchangeCode(t, f, pending.code)).json().error, 'invalid_grant', 'so did the code not yet exchanged');
    const fresh = (await exchangeCode(t, f, narrowed.searchParams.get('code')!)).json();
    assert.equal(fresh.scope, 'read_profile');

    // Giving more again ends nothing.
    const widened = await authorizeAndAllow(first.browser, authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, state: 'wide', ...both }));
    assert.ok(widened.searchParams.get('code'));
    assert.equal(await useToken(t, fresh.access_token), 200);
    assert.equal((await refresh(t, f, fresh.refresh_token)).statusCode, 200);
  });

  it('asking later for one more scope adds it to the grant: tokens for the earlier scope keep working', async () => {
    const profile = new Browser(t.app);
    await signIn(profile, f.user.email, f.password);
    const first = authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'read_profile read_activity', prompt: 'consent' });
    const profileCode = (await authorizeAndAllow(profile, first, { untick: ['read_activity'] })).searchParams.get('code')!;
    const profileTokens = (await exchangeCode(t, f, profileCode)).json();
    assert.equal(profileTokens.scope, 'read_profile');
    const activity = await obtainCode(t, f, { scope: 'read_activity', prompt: 'consent' }, profile);
    const activityTokens = (await exchangeCode(t, f, activity.code)).json();
    assert.equal(activityTokens.scope, 'read_activity', 'the token carries what this consent granted');
    assert.equal(await useToken(t, profileTokens.access_token), 200, 'not asked about read_profile, so it was not withdrawn');
    assert.equal((await refresh(t, f, profileTokens.refresh_token)).statusCode, 200);
    // The grant now covers both: asking for both is remembered (no consent page).
    const both = await profile.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'read_profile read_activity' }));
    assert.equal(both.status, 302);
    assert.ok(both.location().searchParams.get('code'));
  });

  it('serves the authorize and consent pages with frame-blocking and CSP headers', async () => {
    const consent = await browser.get(authorizeUrl({ ...base(), prompt: 'consent' }));
    const signedOut = await new Browser(t.app).get('/login');
    const errorPage = await browser.get(authorizeUrl({ ...base(), client_id: 'nope' }));
    for (const response of [consent, signedOut, errorPage]) {
      assert.equal(response.headers['x-frame-options'], 'DENY');
      const csp = String(response.headers['content-security-policy']);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /form-action/);
      assert.equal(response.headers['cache-control'], 'no-store');
    }
  });

  it('serves the path with a trailing slash too', async () => {
    const response = await browser.get(authorizeUrl(base()).replace('/oauth2/authorize?', '/oauth2/authorize/?'));
    assert.ok([200, 302].includes(response.status));
  });

  it('refuses repeated parameters', async () => {
    const url = `${authorizeUrl(base())}&scope=read_profile&scope=read_activity`;
    const response = await browser.get(url);
    assert.equal(response.status, 302);
    assert.equal(response.location().searchParams.get('error'), 'invalid_request');
    const twoClients = await browser.get(`${authorizeUrl(base())}&client_id=other`);
    assert.equal(twoClients.status, 400);
  });
});
