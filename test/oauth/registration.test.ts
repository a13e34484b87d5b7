/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592) through two certified client
 * libraries — oauth4webapi's dynamicClientRegistrationRequest and openid-client's
 * dynamicClientRegistration — on a real socket, then a full code flow with the registered client;
 * and the refusals: registration off (404), token mode without, with a bad or with an expired
 * initial access token (401), bad metadata (400 invalid_redirect_uri / invalid_client_metadata), a
 * wrong registration access token (401).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { createAccount } from '../../src/domain/users.js';
import { createInitialAccessToken } from '../../src/oauth/registration.js';
import type { User } from '../../src/store/users.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect, onSqliteAlone } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { authorizeAndAllow, Browser, createFixture, createOAuthTestApp, PROTECTED_PATH, signIn, type Fixture } from './flow.js';
import { insecure } from './listening.js';
import { freePort } from '../support/cli.js';

cheapPasswordHashing();

const OPERATOR = 'operator@example.com';
const redirectUri = 'http://127.0.0.1:9/callback';

forEachDialect('dynamic client registration (RFC 7591/7592)', (dialect) => {
  describe('REGISTRATION=token, on a real socket', () => {
    let t: TestApp;
    let f: Fixture;
    let operator: User;
    let issuer: URL;
    let as: oauth.AuthorizationServer;
    let initial: string;
    // Metadata and grant-type checks are the same on either database; what a registration keeps
    // (clients, initial and registration access tokens, their expiry) is tested on both.
    const protocolOnly = onSqliteAlone(dialect, it);

    before(async () => {
      const port = await freePort();
      issuer = new URL(`http://127.0.0.1:${port}`);
      t = await createOAuthTestApp(dialect, { PUBLIC_URL: issuer.origin, REGISTRATION: 'token', REGISTRATION_OWNER: OPERATOR });
      await t.app.listen({ port, host: '127.0.0.1' });
      f = await createFixture(t);
      operator = await createAccount(t.database.stores.users, t.clock, { email: OPERATOR, password: f.password, displayName: 'Operator' });
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
      initial = (await createInitialAccessToken({ stores: t.database.stores, clock: t.clock }, 3600)).token;
    });
    after(() => t.close());

    /** A person signs in, follows the authorization URL and allows; the redirect back. */
    async function personAllows(url: URL): Promise<URL> {
      const browser = new Browser(null, issuer.origin);
      const toLogin = await browser.get(url.pathname + url.search);
      assert.equal(toLogin.status, 302);
      const signedIn = await signIn(browser, f.user.email, f.password, toLogin.location().searchParams.get('return_to')!);
      return authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
    }

    it('advertises the registration endpoint', () => {
      assert.equal(as.registration_endpoint, `${issuer.origin}/oauth2/register`);
    });

    it('oauth4webapi: registers a confidential client, reads, updates and deletes it, and completes a code flow with it', async () => {
      const response = await oauth.dynamicClientRegistrationRequest(as, {
        redirect_uris: [redirectUri], client_name: 'Registered Coach', token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: 'read_profile read_activity',
        client_uri: 'https://coach.example', logo_uri: 'https://coach.example/logo.png',
      }, { initialAccessToken: initial, ...insecure });
      assert.equal(response.status, 201);
      const registered = await oauth.processDynamicClientRegistrationResponse(response);
      assert.ok(registered.client_secret);
      assert.equal(registered.client_name, 'Registered Coach');
      assert.equal(registered.scope, 'read_profile read_activity');
      assert.equal(registered.client_secret_expires_at, 0);
      assert.equal(registered.logo_uri, undefined, 'metadata Stride does not use is not echoed');
      const rat = registered.registration_access_token as string;
      const uri = registered.registration_client_uri as string;
      assert.equal(uri, `${issuer.origin}/oauth2/register/${registered.client_id}`);

      // It is the operator's app: their dashboard lists it.
      const listed = await t.database.stores.apps.list(operator.id);
      assert.ok(listed.some((app) => app.clientId === registered.client_id));
      const operatorBrowser = new Browser(t.app);
      assert.equal((await signIn(operatorBrowser, OPERATOR, f.password)).status, 303);
      const dashboard = await operatorBrowser.get('/dashboard');
      assert.equal(dashboard.status, 200);
      assert.match(dashboard.body, /Registered Coach/);
      assert.ok(dashboard.body.includes(registered.client_id));

      const c: oauth.Client = { client_id: registered.client_id };
      const auth = oauth.ClientSecretBasic(registered.client_secret as string);
      const verifier = oauth.generateRandomCodeVerifier();
      const url = new URL(as.authorization_endpoint!);
      for (const [name, value] of Object.entries({
        client_id: c.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'read_profile', state: 'st',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      })) url.searchParams.set(name, value);
      const back = await personAllows(url);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as, c, await oauth.authorizationCodeGrantRequest(as, c, auth, oauth.validateAuthResponse(as, c, back, 'st'), redirectUri, verifier, insecure),
      );
      const resource = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure);
      assert.equal(resource.status, 200);

      // RFC 7592: read, replace, delete.
      const read = await fetch(uri, { headers: { authorization: `Bearer ${rat}` } });
      assert.equal(read.status, 200);
      const information = await read.json();
      assert.equal(information.client_id, registered.client_id);
      assert.equal(information.client_uri, 'https://coach.example');
      assert.equal(information.client_secret, undefined);
      assert.equal(information.registration_access_token, undefined);

      const replaced = await fetch(uri, {
        method: 'PUT', headers: { authorization: `Bearer ${rat}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: registered.client_id, client_name: 'Renamed Coach', redirect_uris: ['https://coach.example/cb'] }),
      });
      assert.equal(replaced.status, 200);
      const after = await replaced.json();
      assert.equal(after.client_name, 'Renamed Coach');
      assert.deepEqual(after.redirect_uris, ['https://coach.example/cb']);
      // Full replacement: what was left out is back to its default.
      assert.equal(after.scope, 'read_profile');
      assert.equal(after.client_uri, undefined);
      assert.deepEqual(after.grant_types, ['authorization_code', 'refresh_token']);

      const wrong = await fetch(uri, { headers: { authorization: 'Bearer sra_not-the-token' } });
      assert.equal(wrong.status, 401);
      assert.equal((await wrong.json()).error, 'invalid_token');
      assert.match(wrong.headers.get('www-authenticate') ?? '', /^Bearer /);
      const none = await fetch(uri);
      assert.equal(none.status, 401);
      const otherClient = await fetch(`${issuer.origin}/oauth2/register/${f.app.clientId}`, { headers: { authorization: `Bearer ${rat}` } });
      assert.equal(otherClient.status, 401, "one client's token does not open another");

      const deleted = await fetch(uri, { method: 'DELETE', headers: { authorization: `Bearer ${rat}` } });
      assert.equal(deleted.status, 204);
      assert.equal(await t.database.stores.apps.findByClientId(registered.client_id), undefined);
      assert.equal((await fetch(uri, { headers: { authorization: `Bearer ${rat}` } })).status, 401);
      const refused = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(PROTECTED_PATH, issuer), undefined, undefined, insecure).catch((error) => error.response as Response);
      assert.equal(refused.status, 401, 'its tokens went with it');
    });

    protocolOnly('openid-client: registers a public client and completes a code flow with it', async () => {
      const config = await client.dynamicClientRegistration(issuer, {
        redirect_uris: [redirectUri], client_name: 'Registered Phone', token_endpoint_auth_method: 'none', scope: 'read_profile',
      }, client.None(), { initialAccessToken: initial, execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
      const metadata = config.clientMetadata();
      assert.equal(metadata.token_endpoint_auth_method, 'none');
      assert.equal(metadata.client_secret, undefined);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri, scope: 'read_profile', state, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const back = await personAllows(url);
      const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
      const resource = await fetch(new URL(PROTECTED_PATH, issuer), { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(resource.status, 200);
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      assert.ok(refreshed.access_token);
    });

    it('opens no app that was not registered through RFC 7591, whatever token is sent (RFC 7592 §2)', async () => {
      // f.app was made on the dashboard's path: it has no registration access token at all.
      const uri = `${issuer.origin}/oauth2/register/${f.app.clientId}`;
      for (const token of ['stride-no-registration-token', 'sra_made-up', 'x']) {
        const headers = { authorization: `Bearer ${token}` };
        assert.equal((await fetch(uri, { headers })).status, 401, `read with ${token}`);
        const put = await fetch(uri, {
          method: 'PUT', headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ client_id: f.app.clientId, client_name: 'Hijacked', redirect_uris: ['https://attacker.example/cb'] }),
        });
        assert.equal(put.status, 401, `update with ${token}`);
        assert.equal((await fetch(uri, { method: 'DELETE', headers })).status, 401, `delete with ${token}`);
      }
      const app = await t.database.stores.apps.findByClientId(f.app.clientId);
      assert.ok(app, 'the app is still there');
      assert.deepEqual(app.redirectUris, f.app.redirectUris);
      assert.equal(app.name, f.app.name);
    });

    protocolOnly('lets a registered client use only the grant types it registered (RFC 7591 §2)', async () => {
      const register = await t.app.inject({
        method: 'POST', url: '/oauth2/register', headers: { authorization: `Bearer ${initial}` },
        payload: { redirect_uris: ['https://g.example/cb'], client_name: 'Codes only', grant_types: ['authorization_code'] },
      });
      assert.equal(register.statusCode, 201);
      const { client_id, client_secret, registration_access_token: rat } = register.json();
      assert.deepEqual(register.json().grant_types, ['authorization_code']);
      const refresh = () => t.app.inject({
        method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'srt_any', client_id, client_secret }).toString(),
      });
      const refused = await refresh();
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().error, 'unauthorized_client');
      // An update that adds refresh_token allows it from then on.
      const put = await t.app.inject({
        method: 'PUT', url: `/oauth2/register/${client_id}`, headers: { authorization: `Bearer ${rat}` },
        payload: { client_id, redirect_uris: ['https://g.example/cb'], client_name: 'Codes only', grant_types: ['authorization_code', 'refresh_token'] },
      });
      assert.equal(put.statusCode, 200);
      assert.equal((await refresh()).json().error, 'invalid_grant', 'refresh_token is allowed now: the made-up token itself is refused');
    });

    it('refuses a registration without, with a bad, or with an expired initial access token', async () => {
      const body = { redirect_uris: ['https://a.example/cb'], client_name: 'Nope' };
      const post = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/oauth2/register', headers, payload: body });
      const without = await post({});
      assert.equal(without.statusCode, 401);
      assert.equal(without.json().error, 'invalid_token');
      assert.equal((await post({ authorization: 'Bearer sia_made-up' })).statusCode, 401);
      assert.equal((await post({ authorization: 'Basic eDp5' })).statusCode, 401);
      const shortLived = (await createInitialAccessToken({ stores: t.database.stores, clock: t.clock }, 60)).token;
      assert.equal((await post({ authorization: `Bearer ${shortLived}` })).statusCode, 201);
      t.clock.advance(61);
      const expired = await post({ authorization: `Bearer ${shortLived}` });
      assert.equal(expired.statusCode, 401);
      assert.match(expired.json().error_description, /unknown or expired/);
    });

    protocolOnly('refuses bad metadata with the RFC 7591 errors', async () => {
      const post = (body: object) => t.app.inject({ method: 'POST', url: '/oauth2/register', headers: { authorization: `Bearer ${initial}` }, payload: body });
      const base = { redirect_uris: ['https://a.example/cb'], client_name: 'Checked' };
      const cases: Array<[object, string, RegExp]> = [
        [{ ...base, redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri', /must use https/],
        [{ ...base, redirect_uris: ['https://a.example/cb#x'] }, 'invalid_redirect_uri', /fragment/],
        [{ ...base, redirect_uris: [] }, 'invalid_redirect_uri', /at least one redirect URI/],
        [{ client_name: 'No URIs' }, 'invalid_redirect_uri', /at least one redirect URI/],
        [{ ...base, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /token_endpoint_auth_method must be one of/],
        [{ ...base, scope: 'read_profile read_minds' }, 'invalid_client_metadata', /unknown scope "read_minds"/],
        [{ ...base, grant_types: ['client_credentials'] }, 'invalid_client_metadata', /grant_types/],
        // The device grant is a phishing surface (RFC 8628 §5.4): only the app's owner may allow it.
        [{ ...base, grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'] }, 'invalid_client_metadata', /grant_types/],
        [{ ...base, redirect_uris: ['javascript:alert(1)//https://a.example/cb'] }, 'invalid_redirect_uri', /not allowed/],
        [{ ...base, redirect_uris: ['data:text/html,<script>alert(1)</script>'] }, 'invalid_redirect_uri', /not allowed/],
        [{ ...base, redirect_uris: ['https://*.example.com/cb#'] }, 'invalid_redirect_uri', /fragment/],
        [{ ...base, response_types: ['token'] }, 'invalid_client_metadata', /response_types/],
        [{ redirect_uris: base.redirect_uris }, 'invalid_client_metadata', /client_name is required/],
        [{ ...base, client_name: 'A\u202eB' }, 'invalid_client_metadata', /invisible formatting/],
        [{ ...base, client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata', /client_uri/],
      ];
      for (const [body, error, description] of cases) {
        const response = await post(body);
        assert.equal(response.statusCode, 400, JSON.stringify(body));
        assert.equal(response.json().error, error, JSON.stringify(body));
        assert.match(response.json().error_description, description);
      }
      const typed = await post({ ...base, redirect_uris: 'https://a.example/cb' });
      assert.equal(typed.statusCode, 400);
      assert.equal(typed.json().error_description, 'body/redirect_uris must be array');
    });

    it('refuses the registration access token of one registered client on another registered client (RFC 7592 §3)', async () => {
      const register = async (name: string) => {
        const created = await t.app.inject({ method: 'POST', url: '/oauth2/register', headers: { authorization: `Bearer ${initial}` }, payload: { redirect_uris: [`https://${name.toLowerCase()}.example/cb`], client_name: name } });
        assert.equal(created.statusCode, 201);
        return created.json() as { client_id: string; registration_access_token: string };
      };
      const mine = await register('Mine');
      const theirs = await register('Theirs');
      const uri = `${issuer.origin}/oauth2/register/${theirs.client_id}`;
      const headers = { authorization: `Bearer ${mine.registration_access_token}` };
      assert.equal((await fetch(uri, { headers })).status, 401, 'read');
      const put = await fetch(uri, {
        method: 'PUT', headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: theirs.client_id, client_name: 'Hijacked', redirect_uris: ['https://attacker.example/cb'] }),
      });
      assert.equal(put.status, 401, 'update');
      assert.equal((await fetch(uri, { method: 'DELETE', headers })).status, 401, 'delete');
      const app = await t.database.stores.apps.findByClientId(theirs.client_id);
      assert.ok(app, 'the other client is still there');
      assert.deepEqual(app.redirectUris, ['https://theirs.example/cb']);
      assert.equal(app.name, 'Theirs');
      // Each token still opens its own client.
      assert.equal((await fetch(`${issuer.origin}/oauth2/register/${mine.client_id}`, { headers })).status, 200);
      assert.equal((await fetch(uri, { headers: { authorization: `Bearer ${theirs.registration_access_token}` } })).status, 200);
    });

    it('refuses an update that names another client or carries server fields', async () => {
      const created = await t.app.inject({ method: 'POST', url: '/oauth2/register', headers: { authorization: `Bearer ${initial}` }, payload: { redirect_uris: ['https://u.example/cb'], client_name: 'Upd' } });
      const { client_id, registration_access_token: rat } = created.json();
      const put = (body: object) => t.app.inject({ method: 'PUT', url: `/oauth2/register/${client_id}`, headers: { authorization: `Bearer ${rat}` }, payload: body });
      const base = { client_id, redirect_uris: ['https://u.example/cb'], client_name: 'Upd' };
      assert.equal((await put({ ...base, client_id: 'sc_other' })).statusCode, 400);
      assert.equal((await put({ ...base, registration_access_token: rat })).statusCode, 400);
      assert.equal((await put({ ...base, client_secret: 'scs_wrong' })).statusCode, 400);
      const toPublic = await put({ ...base, token_endpoint_auth_method: 'none' });
      assert.equal(toPublic.json().error, 'invalid_client_metadata');
      assert.equal((await put({ ...base, token_endpoint_auth_method: 'client_secret_post' })).json().token_endpoint_auth_method, 'client_secret_post');
    });
  });

  onSqliteAlone(dialect, describe)('REGISTRATION=open under a flood', () => {
    let open: TestApp;
    before(async () => {
      open = await createOAuthTestApp(dialect, { REGISTRATION: 'open', REGISTRATION_OWNER: OPERATOR, RATE_LIMIT: 'on', TRUST_PROXY: 'loopback' });
      await createAccount(open.database.stores.users, open.clock, { email: OPERATOR, password: 'correct horse battery', displayName: 'Operator' });
    });
    after(() => open.close());

    it('registers at most RATE_LIMIT_REGISTRATION (10/hour) clients per address; other addresses go on', async () => {
      const register = (address: string, i: number) => open.app.inject({
        method: 'POST', url: '/oauth2/register', headers: { 'x-forwarded-for': address },
        payload: { redirect_uris: [`https://flood${i}.example/cb`], client_name: `Flood ${i}` },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await register('203.0.113.9', i)).statusCode);
      assert.deepEqual(statuses, [...Array(10).fill(201), 429]);
      const limited = await register('203.0.113.9', 99);
      assert.equal(limited.json().error, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal((await register('198.51.100.1', 100)).statusCode, 201, 'another address');
      assert.equal((await open.database.stores.apps.list((await open.database.stores.users.findByEmail(OPERATOR))!.id)).length, 11);
    });
  });

  onSqliteAlone(dialect, describe)('REGISTRATION=open and off', () => {
    let open: TestApp;
    let off: TestApp;

    before(async () => {
      open = await createOAuthTestApp(dialect, { REGISTRATION: 'open', REGISTRATION_OWNER: OPERATOR });
      await createAccount(open.database.stores.users, open.clock, { email: OPERATOR, password: 'correct horse battery', displayName: 'Operator' });
      off = await createOAuthTestApp(dialect);
    });
    after(async () => {
      await open.close();
      await off.close();
    });

    it('open: registers without a token', async () => {
      const response = await open.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: ['https://o.example/cb'], client_name: 'Open' } });
      assert.equal(response.statusCode, 201);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.equal(response.json().token_endpoint_auth_method, 'client_secret_basic');
    });

    it('refuses a client_name that reads as Stride with invalid_client_metadata, on registration and on update (RFC 7591 §3.2.2, RFC 7592 §2.2)', async () => {
      for (const clientName of ['Stride', 'STRIDE Security', 'Strid\u0435']) {
        const refused = await open.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: ['https://o.example/cb'], client_name: clientName } });
        assert.equal(refused.statusCode, 400, clientName);
        assert.equal(refused.json().error, 'invalid_client_metadata');
        assert.match(refused.json().error_description, /^client_name: name must not read as "Stride", the name of this service/);
      }
      const registered = (await open.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: ['https://o.example/cb'], client_name: 'Pace Coach for Stride' } })).json();
      const updated = await open.app.inject({
        method: 'PUT', url: `/oauth2/register/${registered.client_id}`, headers: { authorization: `Bearer ${registered.registration_access_token}` },
        payload: { client_id: registered.client_id, redirect_uris: ['https://o.example/cb'], client_name: 'Stride Official', client_secret: registered.client_secret },
      });
      assert.equal(updated.statusCode, 400);
      assert.equal(updated.json().error, 'invalid_client_metadata');
      assert.equal((await open.database.stores.apps.findByClientId(registered.client_id))?.name, 'Pace Coach for Stride');
    });

    it('off: every registration route is 404, and the metadata names none', async () => {
      const metadata = (await off.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
      assert.equal(metadata.registration_endpoint, undefined);
      const post = await off.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: ['https://o.example/cb'], client_name: 'Off' } });
      assert.equal(post.statusCode, 404);
      assert.equal(post.json().error, 'not_found');
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await off.app.inject({ method, url: '/oauth2/register/sc_any', headers: { authorization: 'Bearer x' }, ...(method === 'PUT' && { payload: {} }) });
        assert.equal(response.statusCode, 404, method);
      }
    });
  });
});
