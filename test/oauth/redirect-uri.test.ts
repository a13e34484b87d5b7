/**
 * Redirect URI matching (src/oauth/redirect-uri.ts, docs/oauth.md): exact, but for the port of a
 * public app's loopback redirect URI (RFC 8252 §7.3, RFC 9700 §2.1), which a native app picks at
 * the time of the request — checked alone, and through the authorization and token endpoints.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerApp, type RegisteredApp } from '../../src/domain/apps.js';
import { isRegisteredRedirectUri } from '../../src/oauth/redirect-uri.js';
import type { App } from '../../src/store/apps.js';
import type { TestApp } from '../support/app.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { authorizeAndAllow, authorizeUrl, Browser, createFixture, createOAuthTestApp, pkce, signIn, tokenRequest, type Fixture } from './flow.js';

cheapPasswordHashing();

const LOOPBACK_V4 = 'http://127.0.0.1/callback';
const LOOPBACK_V6 = 'http://[::1]:8080/cb?app=walker';

/** The two fields the check reads; the rest of an app does not take part. */
const appWith = (isPublic: boolean, redirectUris: string[]) => ({ isPublic, redirectUris }) as App;

describe('redirect URI matching', () => {
  const publicApp = appWith(true, [LOOPBACK_V4, LOOPBACK_V6, 'com.example.walker:/cb', 'https://walker.example/cb']);

  it('matches a public app loopback URI with any port, or none', () => {
    for (const uri of [
      LOOPBACK_V4,
      'http://127.0.0.1:1/callback',
      'http://127.0.0.1:51234/callback',
      'http://127.0.0.1:65535/callback',
      LOOPBACK_V6,
      'http://[::1]/cb?app=walker',
      'http://[::1]:49152/cb?app=walker',
    ]) {
      assert.equal(isRegisteredRedirectUri(publicApp, uri), true, uri);
    }
  });

  it('refuses every other difference from a loopback URI, and other ports for any other URI', () => {
    for (const uri of [
      'http://127.0.0.1:51234/callback/',
      'http://127.0.0.1:51234/Callback',
      'http://127.0.0.1:51234/callback?x=1',
      'http://127.0.0.1:51234/callback#x',
      'http://127.0.0.1:51234',
      'https://127.0.0.1:51234/callback',
      'http://localhost:51234/callback',
      'http://127.0.0.2:51234/callback',
      'http://127.000.000.001:51234/callback',
      'http://2130706433:51234/callback',
      'http://[0:0:0:0:0:0:0:1]:51234/cb?app=walker',
      'http://127.0.0.1.evil.example:51234/callback',
      'http://127.0.0.1:51234@evil.example/callback',
      'http://127.0.0.1:51234:80/callback',
      'http://127.0.0.1:0/callback',
      'http://127.0.0.1:051234/callback',
      'http://127.0.0.1:65536/callback',
      'http://127.0.0.1:/callback',
      'http://127.0.0.1:51234/callback\n',
      'http://[::1]:49152/cb?app=other',
      'http://[::1]:49152/cb',
      'https://walker.example:8443/cb',
      'com.example.walker:8080/cb',
    ]) {
      assert.equal(isRegisteredRedirectUri(publicApp, uri), false, JSON.stringify(uri));
    }
  });

  it('keeps a confidential app to the exact URI, loopback or not', () => {
    const confidential = appWith(false, [LOOPBACK_V4, 'http://127.0.0.1:8080/cb']);
    assert.equal(isRegisteredRedirectUri(confidential, LOOPBACK_V4), true);
    assert.equal(isRegisteredRedirectUri(confidential, 'http://127.0.0.1:8080/cb'), true);
    assert.equal(isRegisteredRedirectUri(confidential, 'http://127.0.0.1:51234/callback'), false);
    assert.equal(isRegisteredRedirectUri(confidential, 'http://127.0.0.1:8081/cb'), false);
  });
});

describe('a native app on a loopback port chosen at the time of the request', () => {
  let t: TestApp;
  let f: Fixture;
  let browser: Browser;
  let nativeApp: App;
  let webApp: RegisteredApp;
  before(async () => {
    t = await createOAuthTestApp('sqlite');
    f = await createFixture(t);
    browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    ({ app: nativeApp } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Desktop Walker', redirectUris: [LOOPBACK_V4], scopes: ['read_profile'], isPublic: true,
    }));
    webApp = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Local Web Walker', redirectUris: [LOOPBACK_V4], scopes: ['read_profile'], isPublic: false,
    });
  });
  after(() => t.close());

  it('gets its code at that port and exchanges it with the same URI, and with no other', async () => {
    const redirectUri = 'http://127.0.0.1:51234/callback';
    const { verifier, challenge } = pkce();
    const back = await authorizeAndAllow(browser, authorizeUrl({
      response_type: 'code', client_id: nativeApp.clientId, redirect_uri: redirectUri, state: 's', code_challenge: challenge, code_challenge_method: 'S256',
    }));
    assert.equal(`${back.origin}${back.pathname}`, redirectUri);
    const code = back.searchParams.get('code')!;
    const exchange = (uri: string) => tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: uri, client_id: nativeApp.clientId, code_verifier: verifier });

    const otherPort = await exchange('http://127.0.0.1:51235/callback');
    assert.equal(otherPort.statusCode, 400);
    assert.equal(otherPort.json().error, 'access_denied');
    const tokens = await exchange(redirectUri);
    assert.equal(tokens.statusCode, 200, tokens.body);
    assert.equal(tokens.json().scope, 'read_profile');
  });

  it('is refused another loopback path, and a confidential app any other port', async () => {
    for (const [clientId, redirectUri] of [
      [nativeApp.clientId, 'http://127.0.0.1:51234/other'],
      [nativeApp.clientId, 'http://localhost:51234/callback'],
      [webApp.app.clientId, 'http://127.0.0.1:51234/callback'],
    ] as const) {
      const { challenge } = pkce();
      const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 's', code_challenge: challenge, code_challenge_method: 'S256' }));
      assert.equal(page.status, 400, redirectUri);
      assert.equal(page.headers.location, undefined);
      assert.match(page.body, /not one registered for this app/);
    }
  });
});
