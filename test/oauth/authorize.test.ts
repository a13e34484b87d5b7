/**
 * The authorization request (RFC 6749 §4.1.1, docs/oauth.md): redirect URI rules, errors, consent,
 * CSRF, headers.
 */
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
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

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
      // Scheme, port, userinfo and host tricks.
      'http://client.example/callback',
      'https://client.example:443/callback',
      'https://client.example:8443/callback',
      'https://client.example@evil.example/callback',
      'https://evil.example@client.example/callback',
      'https://client.example%40evil.example/callback',
      'https://client.example./callback',
      'https://evil.example/client.example/callback',
      'https://evil.example/?https://client.example/callback',
      'https://client.example\\@evil.example/callback',
      'https://client.ex\u0430mple/callback', // Cyrillic a
      'https://xn--client-example/callback',
      '//client.example/callback',
      'client.example/callback',
      'javascript:alert(1)//https://client.example/callback',
      'data:text/html,https://client.example/callback',
      // Path tricks: encoding, case, dot segments, separators.
      'https://client.example/Callback',
      'https://client.example/callback%2F',
      'https://client.example/%63allback',
      'https://client.example/callback/.',
      'https://client.example/./callback',
      'https://client.example//callback',
      'https://client.example/callback;x',
      'https://client.example/callback%00',
      'https://client.example/callback%20',
      'https://client.example/callback\\',
      'https://client.example/callback/..',
      'https://client.example/callback%2F..%2Fother',
      // Whitespace and query variants.
      ` ${REDIRECT_URI}`,
      `${REDIRECT_URI} `,
      `${REDIRECT_URI}\t`,
      `${REDIRECT_URI}?`,
      `${REDIRECT_URI}#`,
      'https://client.example/other?x=2',
      'https://client.example/other?x=1&y=2',
      'https://client.example/other?X=1',
      'https://client.example/other',
    ]) {
      await assertErrorPage({ ...base(), redirect_uri: variant }, /not one registered for this app/);
    }
  });

  it('refuses redirect_url and redirect_uri that disagree, and a missing redirect URI', async () => {
    await assertErrorPage({ ...base(), redirect_url: OTHER_REDIRECT_URI }, /both sent and differ/);
    await assertErrorPage({ ...base(), redirect_uri: undefined }, /no redirect_uri/);
  });

  it('accepts redirect_url (the older name) alone and both names when they agree', async () => {
    const olderName = await browser.get(authorizeUrl({ ...base(), redirect_uri: undefined, redirect_url: OTHER_REDIRECT_URI }));
    assert.equal(olderName.status, 200);
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
    const { app } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
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

  /** The person allows `appClientId` once (a consent page): the app is then vetted by them. */
  async function vet(as: Browser, params: Record<string, string | undefined> = base()) {
    const back = await authorizeAndAllow(as, authorizeUrl({ ...params, prompt: 'consent' }));
    assert.ok(back.searchParams.get('code'), `no code in ${back}`);
  }

  /**
   * Other errors go back to the app with error, error_description and state (RFC 6749 §4.1.2.1),
   * at once when a person has vetted the app: signed in, holding a grant for it.
   */
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

  /** The way back offered by an error page: the href of its link to `redirectUri`. */
  function linkBack(html: string, redirectUri: string): URL {
    const hrefs = [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"'));
    const href = hrefs.find((h) => h.startsWith(`${redirectUri}?`));
    assert.ok(href, `no link back to ${redirectUri} in ${html.slice(0, 1500)}`);
    return new URL(href);
  }

  /**
   * RFC 9700 §4.11.2: an app nobody has vetted gets no automatic redirect. The error page (400)
   * names the error and links back to the app with the error response; nothing is redirected.
   */
  async function assertUnvettedErrorPage(as: Browser, params: Record<string, string | undefined>, error: string, redirectUri = REDIRECT_URI) {
    const response = await as.get(authorizeUrl(params));
    assert.equal(response.status, 400, response.body.slice(0, 300));
    assert.equal(response.headers.location, undefined);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, new RegExp(error));
    const back = linkBack(response.body, redirectUri);
    assert.equal(back.searchParams.get('error'), error);
    assert.ok(back.searchParams.get('error_description'));
    assert.equal(back.searchParams.get('state'), params.state ?? null);
    assert.equal(back.searchParams.get('iss'), t.config.publicUrl);
    assert.equal(back.searchParams.get('code'), null);
    return back;
  }

  const errorCases = (params: Record<string, string | undefined>): Array<[Record<string, string | undefined>, string]> => [
    [{ ...params, response_type: 'token' }, 'unsupported_response_type'],
    [{ ...params, response_type: 'x' }, 'unsupported_response_type'],
    [{ ...params, response_type: undefined }, 'invalid_request'],
    [{ ...params, scope: 'read_profile fly_to_moon' }, 'invalid_scope'],
    [{ ...params, scope: 'write_profile' }, 'invalid_scope'], // not registered by this app
    [{ ...params, code_challenge: pkce().challenge, code_challenge_method: 'plain' }, 'invalid_request'],
    [{ ...params, code_challenge: pkce().challenge }, 'invalid_request'],
    [{ ...params, code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    [{ ...params, state: undefined, response_type: 'token' }, 'unsupported_response_type'],
  ];

  it('redirects errors other than client and redirect URI to an app the signed-in person granted, with state', async () => {
    await vet(browser);
    for (const [params, error] of errorCases(base())) await assertRedirectError(params, error);
  });

  it('never redirects an error to an app no person has vetted: an error page with a link back instead', async () => {
    const { registerApp } = await import('../../src/domain/apps.js');
    // Anyone may register any https redirect URI: this one is an attacker's.
    const attacker = 'https://attacker.example/landing';
    const { app } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Redirector', redirectUris: [attacker], scopes: ['read_profile'], isPublic: false,
    });
    const params = { response_type: 'code', client_id: app.clientId, redirect_uri: attacker, state: 'st' };
    // Signed out, and signed in without a grant for this app: both get the page.
    for (const as of [new Browser(t.app), browser]) {
      for (const [request, error] of errorCases(params)) {
        await assertUnvettedErrorPage(as, request, error, attacker);
      }
    }
    // The error page escapes what the request carried.
    const shown = await browser.get(authorizeUrl({ ...params, scope: '<b>bold</b>' }));
    assert.equal(shown.status, 400);
    assert.doesNotMatch(shown.body, /<b>bold/);
    // A consent form altered on its way back (a scope the app is not registered for) is refused
    // with the page too, as long as nobody has allowed the app.
    const consent = await browser.get(authorizeUrl(params));
    const altered = await browser.post('/oauth2/authorize', { ...formFields(consent.body, '/oauth2/authorize'), scope: 'write_profile', granted_scope: ['write_profile'], decision: 'allow' });
    assert.equal(altered.status, 400);
    assert.equal(altered.headers.location, undefined);
    assert.equal(linkBack(altered.body, attacker).searchParams.get('error'), 'invalid_scope');
    // The person's own Deny on the consent page still goes back to the app at once.
    const denied = await authorizeAndAllow(browser, authorizeUrl(params), { decision: 'deny' });
    assert.equal(`${denied.origin}${denied.pathname}`, attacker);
    assert.equal(denied.searchParams.get('error'), 'access_denied');
    // Once the person has allowed it, errors go back to it directly.
    await vet(browser, params);
    const redirected = await browser.get(authorizeUrl({ ...params, response_type: 'x' }));
    assert.equal(redirected.status, 302);
    assert.equal(redirected.location().searchParams.get('error'), 'unsupported_response_type');
    // Another person, who never allowed it, still gets the page.
    const other = new Browser(t.app);
    await signIn(other, f.developer.email, f.password);
    await assertUnvettedErrorPage(other, { ...params, response_type: 'x' }, 'unsupported_response_type', attacker);
  });

  it('refuses a public client without PKCE', async () => {
    const params = { response_type: 'code', client_id: f.publicApp.clientId, redirect_uri: 'com.example.walker:/cb', state: 'p' };
    // Not yet approved by this person: the error page, with the way back as a link.
    const back = await assertUnvettedErrorPage(browser, params, 'invalid_request', 'com.example.walker:/cb');
    assert.equal(back.protocol, 'com.example.walker:');
    assert.match(back.searchParams.get('error_description')!, /PKCE/);
    // Approved before: straight back to the app.
    await vet(browser, { ...params, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    const response = await browser.get(authorizeUrl(params));
    assert.equal(response.status, 302);
    assert.equal(response.location().protocol, 'com.example.walker:');
    assert.equal(response.location().searchParams.get('error'), 'invalid_request');
  });

  it('always shows the consent page to a public client, even for scopes granted before (RFC 8252 §8.6)', async () => {
    const person = new Browser(t.app);
    await signIn(person, f.developer.email, f.password);
    const request = () => authorizeUrl({
      response_type: 'code', client_id: f.publicApp.clientId, redirect_uri: 'com.example.walker:/cb', scope: 'read_profile',
      state: 'pub', code_challenge: pkce().challenge, code_challenge_method: 'S256',
    });
    const first = await person.get(request());
    assert.equal(first.status, 200);
    assert.doesNotMatch(first.body, /id="granted-before"/);
    const allowed = await authorizeAndAllow(person, request());
    assert.ok(allowed.searchParams.get('code'));
    // Anyone can start the next request with the public client_id and a PKCE pair of their own:
    // no code without the person's click.
    for (let i = 0; i < 2; i++) {
      const again = await person.get(request());
      assert.equal(again.status, 200, 'the consent page, not a redirect with a code');
      assert.equal(again.headers.location, undefined);
      assert.match(again.body, /id="granted-before"[^>]*>You allowed Pocket Walker this access before/);
    }
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
    await vet(browser);
    const url = `${authorizeUrl(base())}&scope=read_profile&scope=read_activity`;
    const response = await browser.get(url);
    assert.equal(response.status, 302);
    assert.equal(response.location().searchParams.get('error'), 'invalid_request');
    const unvetted = await new Browser(t.app).get(url);
    assert.equal(unvetted.status, 400);
    assert.equal(unvetted.headers.location, undefined);
    const twoClients = await browser.get(`${authorizeUrl(base())}&client_id=other`);
    assert.equal(twoClients.status, 400);
  });
});
