/**
 * Pushed authorization requests (RFC 9126) through two certified client libraries — oauth4webapi's
 * pushedAuthorizationRequest and openid-client's buildAuthorizationUrlWithPAR — on a real socket,
 * through consent to a code and tokens; and the refusals: a request_uri reused, expired or of
 * another client, a push with bad client authentication, and a plain request to an app that
 * requires PAR.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { registerApp } from '../../src/domain/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect, onSqliteAlone } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { authorizeAndAllow, authorizeUrl, Browser, createFixture, encodeForm, formFields, pkce, PROTECTED_PATH, REDIRECT_URI, signIn, type Fixture } from './flow.js';
import { insecure, listeningStride } from './listening.js';

cheapPasswordHashing();

forEachDialect('pushed authorization requests (RFC 9126)', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  const redirectUri = 'http://127.0.0.1:9/callback';
  // What the libraries send and how a push is validated are the same on either database; a
  // request_uri used once, expired or of another client is what the database keeps.
  const protocolOnly = onSqliteAlone(dialect, it);

  before(async () => {
    ({ t, issuer, as } = await listeningStride(dialect));
    f = await createFixture(t);
  });
  after(() => t.close());

  /** A signed-in person follows `url` (an authorization URL) and allows; the redirect back. */
  async function personAllows(url: URL): Promise<URL> {
    const browser = new Browser(null, issuer.origin);
    const toLogin = await browser.get(url.pathname + url.search);
    assert.equal(toLogin.status, 302);
    const signedIn = await signIn(browser, f.user.email, f.password, toLogin.location().searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    return authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
  }

  function push(form: Record<string, string>, headers: Record<string, string> = {}) {
    return t.app.inject({ method: 'POST', url: '/oauth2/par', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: encodeForm(form) });
  }

  function pushFor(fixture: Fixture, extra: Record<string, string> = {}) {
    return push({ client_id: fixture.app.clientId, client_secret: fixture.secret, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'read_profile', state: 's1', ...extra });
  }

  protocolOnly('advertises the endpoint, and PAR as not required of every client', () => {
    assert.equal(as.pushed_authorization_request_endpoint, `${issuer.origin}/oauth2/par`);
    assert.equal(as.require_pushed_authorization_requests, false);
  });

  it('oauth4webapi: pushes, authorizes with the request_uri, and exchanges the code', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'PAR App', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: false, requirePar: true,
    });
    const c: oauth.Client = { client_id: registered.app.clientId };
    const auth = oauth.ClientSecretBasic(registered.clientSecret!);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const params = new URLSearchParams({
      redirect_uri: redirectUri, response_type: 'code', scope: 'read_profile', state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const response = await oauth.pushedAuthorizationRequest(as, c, auth, params, insecure);
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const pushed = await oauth.processPushedAuthorizationResponse(as, c, response);
    assert.match(pushed.request_uri, /^urn:ietf:params:oauth:request_uri:/);
    assert.equal(pushed.expires_in, 60);

    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', c.client_id);
    url.searchParams.set('request_uri', pushed.request_uri);
    const back = await personAllows(url);
    const callback = oauth.validateAuthResponse(as, c, back, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, c, await oauth.authorizationCodeGrantRequest(as, c, auth, callback, redirectUri, verifier, insecure),
    );
    assert.equal(tokens.scope, 'read_profile');
    const resource = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure);
    assert.equal(resource.status, 200);

    // Used once: the same request_uri again is refused.
    const again = await new Browser(t.app).get(authorizeUrl({ client_id: c.client_id, request_uri: pushed.request_uri }));
    assert.equal(again.status, 400);
    assert.match(again.body, /invalid_request_uri/);
  });

  protocolOnly('openid-client: buildAuthorizationUrlWithPAR for a public client, through to tokens', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'PAR Public App', redirectUris: [redirectUri], scopes: ['read_profile', 'read_activity'], isPublic: true,
    });
    const config = await client.discovery(issuer, registered.app.clientId, { token_endpoint_auth_method: 'none' }, client.None(), {
      execute: [client.allowInsecureRequests], algorithm: 'oauth2',
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: redirectUri, scope: 'read_profile read_activity', state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
    const back = await personAllows(url);
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal(tokens.scope, 'read_profile read_activity');
    const resource = await fetch(new URL(PROTECTED_PATH, issuer), { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(resource.status, 200);
  });

  protocolOnly('validates the pushed request as the authorization endpoint does', async () => {
    const badScope = await pushFor(f, { scope: 'read_everything' });
    assert.equal(badScope.statusCode, 400);
    assert.deepEqual(badScope.json(), { error: 'invalid_scope', error_description: 'unknown scope "read_everything"' });
    const badRedirect = await pushFor(f, { redirect_uri: 'https://evil.example/cb' });
    assert.equal(badRedirect.statusCode, 400);
    assert.equal(badRedirect.json().error, 'invalid_request');
    const noType = await pushFor(f, { response_type: 'token' });
    assert.equal(noType.json().error, 'unsupported_response_type');
    const withRequestUri = await pushFor(f, { request_uri: 'urn:ietf:params:oauth:request_uri:x' });
    assert.equal(withRequestUri.statusCode, 400);
    const publicWithoutPkce = await push({ client_id: f.publicApp.clientId, response_type: 'code', redirect_uri: 'com.example.walker:/cb' });
    assert.equal(publicWithoutPkce.statusCode, 400);
    assert.match(publicWithoutPkce.json().error_description, /PKCE/);
    const repeated = await t.app.inject({
      method: 'POST', url: '/oauth2/par', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `${encodeForm({ client_id: f.app.clientId, client_secret: f.secret, response_type: 'code' })}&scope=a&scope=b`,
    });
    assert.equal(repeated.statusCode, 400);
    assert.equal(repeated.json().error, 'invalid_request');
  });

  protocolOnly('refuses a pushed request larger than 8 KB, which would be kept for an hour (RFC 9126)', async () => {
    const bigState = await pushFor(f, { state: 's'.repeat(9000) });
    assert.equal(bigState.statusCode, 400);
    assert.equal(bigState.json().error, 'invalid_request');
    assert.match(bigState.json().error_description, /8192/);
    const padded = await pushFor(f, { padding: 'x'.repeat(500_000) });
    assert.equal(padded.statusCode, 400, 'parameters Stride does not use count too');
    const rows = await t.database.db.kysely.selectFrom('pushed_authorization_requests').select('parameters').execute();
    assert.ok(rows.every((row) => row.parameters.length < 8192), 'nothing that large was kept');
    // A long state within the limit is fine, and comes back.
    const fine = await pushFor(f, { state: 's'.repeat(4000) });
    assert.equal(fine.statusCode, 201);
  });

  protocolOnly('refuses a push with bad client authentication', async () => {
    const wrongSecret = await pushFor({ ...f, secret: 'scs_wrong' });
    assert.equal(wrongSecret.statusCode, 401);
    assert.equal(wrongSecret.json().error, 'invalid_client');
    const noSecret = await push({ client_id: f.app.clientId, response_type: 'code', redirect_uri: REDIRECT_URI });
    assert.equal(noSecret.statusCode, 401);
    const basic = await push({ response_type: 'code', redirect_uri: REDIRECT_URI }, { authorization: `Basic ${Buffer.from(`${f.app.clientId}:nope`).toString('base64')}` });
    assert.equal(basic.statusCode, 401);
    assert.match(String(basic.headers['www-authenticate']), /^Basic/);
    const unknown = await push({ client_id: 'sc_unknown', client_secret: 'x', response_type: 'code' });
    assert.equal(unknown.statusCode, 401);
  });

  it('refuses a request_uri that expired, or that another client pushed', async () => {
    const expired = (await pushFor(f)).json().request_uri as string;
    t.clock.advance(61);
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const late = await browser.get(authorizeUrl({ client_id: f.app.clientId, request_uri: expired }));
    assert.equal(late.status, 400);
    assert.match(late.body, /invalid_request_uri/);

    const pushed = (await pushFor(f)).json().request_uri as string;
    const other = await browser.get(authorizeUrl({ client_id: f.publicApp.clientId, request_uri: pushed }));
    assert.equal(other.status, 400);
    assert.match(other.body, /invalid_request_uri/);
    const noClient = await browser.get(authorizeUrl({ request_uri: pushed }));
    assert.equal(noClient.status, 400);
    // Still usable by its own client, once; parameters sent beside it are ignored (RFC 9126 §4).
    const page = await browser.get(authorizeUrl({ client_id: f.app.clientId, request_uri: pushed, scope: 'write_activity' }));
    assert.equal(page.status, 200);
    assert.match(page.body, /read_profile/);
    assert.doesNotMatch(page.body, /value="write_activity"/);
    const back = await authorizeAndAllow(browser, authorizeUrl({ client_id: f.app.clientId, request_uri: pushed }));
    assert.ok(back.searchParams.get('code'));
    assert.equal(back.searchParams.get('state'), 's1');
    const reused = await browser.get(authorizeUrl({ client_id: f.app.clientId, request_uri: pushed }));
    assert.equal(reused.status, 400);
  });

  it('refuses a consent form sent twice for one pushed request', async () => {
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const pushed = (await pushFor(f, { prompt: 'consent' })).json().request_uri as string;
    const url = authorizeUrl({ client_id: f.app.clientId, request_uri: pushed });
    const page = await browser.get(url);
    assert.equal(page.status, 200);
    const form = { ...formFields(page.body, '/oauth2/authorize'), granted_scope: 'read_profile', decision: 'allow' };
    assert.deepEqual(Object.keys(form).sort(), ['client_id', 'csrf_token', 'decision', 'granted_scope', 'request_uri']);
    assert.equal((await browser.post('/oauth2/authorize', form)).status, 303);
    const second = await browser.post('/oauth2/authorize', form);
    assert.equal(second.status, 400);
  });

  protocolOnly('refuses a plain authorization request to an app that requires PAR', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Strict App', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false, requirePar: true,
    });
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const { challenge } = pkce();
    const plain = await browser.get(authorizeUrl({ client_id: registered.app.clientId, response_type: 'code', redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256' }));
    assert.equal(plain.status, 400);
    assert.match(plain.body, /requires pushed authorization requests/);
    // The same request pushed is accepted.
    const pushed = await push({ client_id: registered.app.clientId, client_secret: registered.clientSecret!, response_type: 'code', redirect_uri: REDIRECT_URI });
    assert.equal(pushed.statusCode, 201);
    const page = await browser.get(authorizeUrl({ client_id: registered.app.clientId, request_uri: pushed.json().request_uri }));
    assert.equal(page.status, 200);
  });
});
