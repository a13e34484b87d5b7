/**
 * The whole flow driven by a real third-party client library (oauth4webapi) against Stride
 * listening on 127.0.0.1: RFC 8414 discovery, PKCE, the code exchange, a protected call, refresh,
 * introspection and RFC 7009 revocation, for a confidential and a public client, and a native app
 * on a loopback port picked at the time of the request.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { registerApp } from '../../src/domain/apps.js';
import type { TestApp } from '../support/app.js';
import { onOneDialect } from '../support/databases.js';
import { authorizeAndAllow, Browser, createFixture, PROTECTED_PATH, signIn, type Fixture } from './flow.js';
import { insecure, listeningStride, pkceAuthorizationUrl } from './listening.js';
import { freePort } from '../support/cli.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

// On SQLite alone: what the library drives (codes, refresh, introspection, revocation, a loopback
// redirect on any port) runs on both databases through the same routes in test/oauth
// (token.test.ts, revocation-introspection.test.ts, token-states.test.ts, authorize.test.ts).
onOneDialect('third-party client library (oauth4webapi) on a real socket', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  const redirectUri = 'http://127.0.0.1:9/callback';

  before(async () => {
    ({ t, issuer, as } = await listeningStride(dialect));
    f = await createFixture(t);
  });
  after(() => t.close());

  async function browserAuthorize(client: oauth.Client, scope: string, returnTo = redirectUri): Promise<{ params: URLSearchParams; verifier: string }> {
    const { url, verifier, state } = await pkceAuthorizationUrl(as, client.client_id, returnTo, scope);

    const browser = new Browser(null, issuer.origin);
    const toLogin = await browser.get(url.pathname + url.search);
    assert.equal(toLogin.status, 302);
    const login = toLogin.location();
    const signedIn = await signIn(browser, f.user.email, f.password, login.searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    const back = await authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
    // Checks state and the RFC 9207 `iss` against the discovered metadata.
    const params = oauth.validateAuthResponse(as, client, back, state);
    return { params, verifier };
  }

  it('discovers the metadata', () => {
    assert.equal(as.issuer, issuer.origin);
    assert.equal(as.token_endpoint, `${issuer.origin}/oauth2/token`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  });

  it('completes the flow as a confidential client (client_secret_basic)', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Library App', redirectUris: [redirectUri], scopes: ['read_profile', 'read_activity'], isPublic: false,
    });
    const client: oauth.Client = { client_id: registered.app.clientId };
    const auth = oauth.ClientSecretBasic(registered.clientSecret!);

    const { params, verifier } = await browserAuthorize(client, 'read_profile read_activity');
    const tokenResponse = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.expires_in, t.config.accessTokenTtl);
    assert.equal(tokens.scope, 'read_profile read_activity');
    assert.ok(tokens.refresh_token);

    const resource = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure);
    assert.equal(resource.status, 200);
    assert.equal((await resource.json()).user_id, f.user.id);

    const refreshed = await oauth.processRefreshTokenResponse(
      as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure),
    );
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.ok(refreshed.refresh_token);

    const introspection = await oauth.processIntrospectionResponse(
      as, client, await oauth.introspectionRequest(as, client, auth, refreshed.access_token, insecure),
    );
    assert.equal(introspection.active, true);
    assert.equal(introspection.client_id, client.client_id);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token!, insecure));
    // The library surfaces the RFC 6750 challenge of the 401.
    await assert.rejects(
      () => oauth.protectedResourceRequest(refreshed.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure),
      (error: { response?: Response; cause?: Array<{ scheme: string; parameters: Record<string, string> }> }) =>
        error.response?.status === 401 && error.cause?.[0]?.scheme === 'bearer' && error.cause[0].parameters.error === 'invalid_token',
    );
    await assert.rejects(
      async () => oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, insecure)),
      (error: { error?: string }) => error.error === 'invalid_grant',
    );
  });

  it('completes the flow as a public client (PKCE, no secret), with client_secret_post refused', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Library Public App', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
    });
    const client: oauth.Client = { client_id: registered.app.clientId, token_endpoint_auth_method: 'none' };
    const { params, verifier } = await browserAuthorize(client, 'read_profile');
    // A public client has no secret: one sent in the body (client_secret_post) is refused, before
    // the code is looked at, so the code still works without it.
    const withSecret = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost('a-secret-it-was-never-given'), params, redirectUri, verifier, insecure);
    assert.equal(withSecret.status, 401);
    await assert.rejects(() => oauth.processAuthorizationCodeResponse(as, client, withSecret), (error: { error?: string }) => error.error === 'invalid_client');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure),
    );
    const refreshed = await oauth.processRefreshTokenResponse(
      as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    const resource = await oauth.protectedResourceRequest(refreshed.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure);
    assert.equal(resource.status, 200);
  });

  it('completes the flow as a native app on the loopback port the system gave it (RFC 8252 §7.3)', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Library Desktop App', redirectUris: ['http://127.0.0.1/callback'], scopes: ['read_profile'], isPublic: true,
    });
    const client: oauth.Client = { client_id: registered.app.clientId, token_endpoint_auth_method: 'none' };
    const loopbackUri = `http://127.0.0.1:${await freePort()}/callback`;
    const { params, verifier } = await browserAuthorize(client, 'read_profile', loopbackUri);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, loopbackUri, verifier, insecure),
    );
    const resource = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure);
    assert.equal(resource.status, 200);
  });

  it('is refused by the library when the wrong code_verifier is sent', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Library App 2', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: false,
    });
    const client: oauth.Client = { client_id: registered.app.clientId };
    const { params } = await browserAuthorize(client, 'read_profile');
    const response = await oauth.authorizationCodeGrantRequest(
      as, client, oauth.ClientSecretPost(registered.clientSecret!), params, redirectUri, oauth.generateRandomCodeVerifier(), insecure,
    );
    await assert.rejects(() => oauth.processAuthorizationCodeResponse(as, client, response), (error: { error?: string }) => error.error === 'invalid_grant');
  });
});
