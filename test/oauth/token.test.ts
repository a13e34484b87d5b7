/**
 * The token endpoint (RFC 6749 §3.2, §5.2; docs/oauth.md): client authentication, the code grant
 * and its attacks.
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
  obtainTokens,
  obtainCode,
  pkce,
  refresh,
  REDIRECT_URI,
  signIn,
  tokenRequest,
  useToken,
  type Fixture,
} from './flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

function basic(id: string, secret: string): string {
  // RFC 6749 §2.3.1: each part form-urlencoded, then base64.
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

forEachDialect('token endpoint: authorization_code grant', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('authenticates with HTTP Basic (form-urlencoded credentials) as well as form fields', async () => {
    const { code } = await obtainCode(t, f);
    const response = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(f.app.clientId, f.secret) });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
  });

  it('answers a wrong secret with 401 invalid_client, with a Basic challenge only when Basic was tried', async () => {
    const { code } = await obtainCode(t, f);
    const form = await exchangeCode(t, f, code, { client_secret: `${f.secret}x` });
    assert.equal(form.statusCode, 401);
    assert.equal(form.json().error, 'invalid_client');
    assert.equal(form.headers['www-authenticate'], undefined);

    const viaBasic = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(f.app.clientId, 'wrong') });
    assert.equal(viaBasic.statusCode, 401);
    assert.equal(viaBasic.json().error, 'invalid_client');
    assert.equal(viaBasic.headers['www-authenticate'], 'Basic realm="stride"');

    const noSecret = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.app.clientId });
    assert.equal(noSecret.statusCode, 401);
    const unknown = await exchangeCode(t, f, code, { client_id: 'nobody' });
    assert.equal(unknown.statusCode, 401);
    // The failed attempts did not use up the code.
    assert.equal((await exchangeCode(t, f, code)).statusCode, 200);
  });

  it('takes the same credentials sent both as HTTP Basic and in the body, as Fitbit\'s client libraries send them, and refuses different ones', async () => {
    const exchange = async (body: Record<string, string>) => {
      const { code } = await obtainCode(t, f);
      return tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...body }, { authorization: basic(f.app.clientId, f.secret) });
    };
    assert.equal((await exchange({ client_id: f.app.clientId, client_secret: f.secret })).statusCode, 200);
    const differing: Array<Record<string, string>> = [{ client_id: f.app.clientId, client_secret: `${f.secret}x` }, { client_secret: 'another' }, { client_id: 'another-client', client_secret: f.secret }];
    for (const body of differing) {
      const response = await exchange(body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error, 'invalid_request');
    }
  });

  it('answers a redirect_uri that differs from the request with access_denied', async () => {
    const { code } = await obtainCode(t, f);
    for (const variant of [`${REDIRECT_URI}/`, REDIRECT_URI.toUpperCase(), 'https://client.example/other?x=1']) {
      const response = await exchangeCode(t, f, code, { redirect_uri: variant });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().error, 'access_denied');
    }
    const missing = await tokenRequest(t, { grant_type: 'authorization_code', code, client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(missing.json().error, 'invalid_request');
    assert.equal((await exchangeCode(t, f, code)).statusCode, 200);
  });

  it('refuses a second use of a code and revokes every token issued from it', async () => {
    const { code } = await obtainCode(t, f);
    const first = await exchangeCode(t, f, code);
    assert.equal(first.statusCode, 200);
    const tokens = first.json();
    // A refresh descends from the same code: its tokens are in the family too.
    const refreshed = (await refresh(t, f, tokens.refresh_token)).json();
    assert.equal(await useToken(t, refreshed.access_token), 200);
    // Another code of the same user and app (the same grant) starts another family.
    const otherFamily = (await exchangeCode(t, f, (await obtainCode(t, f)).code)).json();

    const second = await exchangeCode(t, f, code);
    assert.equal(second.statusCode, 400);
    assert.equal(second.json().error, 'invalid_grant');
    assert.equal(await useToken(t, tokens.access_token), 401);
    assert.equal(await useToken(t, refreshed.access_token), 401);
    assert.equal((await refresh(t, f, refreshed.refresh_token)).json().error, 'invalid_grant');
    assert.equal(await useToken(t, otherFamily.access_token), 200, 'the other family of the grant is untouched');
    assert.equal((await refresh(t, f, otherFamily.refresh_token)).statusCode, 200);
  });

  it('lets only one of several concurrent exchanges of a code succeed', async () => {
    const { code } = await obtainCode(t, f);
    const responses = await Promise.all(Array.from({ length: 5 }, () => exchangeCode(t, f, code)));
    const ok = responses.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 1, `${ok.length} exchanges succeeded`);
    for (const r of responses.filter((r) => r.statusCode !== 200)) assert.equal(r.json().error, 'invalid_grant');
    // The winner's tokens were revoked by the concurrent reuse (RFC 6749 §4.1.2).
    for (const r of ok) assert.equal(await useToken(t, r.json().access_token), 401);
  });

  it('refuses an expired code (lifetime AUTH_CODE_TTL, 600 s)', async () => {
    const { code } = await obtainCode(t, f);
    t.clock.advance(601);
    const response = await exchangeCode(t, f, code);
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error, 'invalid_grant');
  });

  it('a code just inside its lifetime still works', async () => {
    const { code } = await obtainCode(t, f);
    t.clock.advance(599);
    assert.equal((await exchangeCode(t, f, code)).statusCode, 200);
  });

  it('refuses a code of another client, and an unknown code', async () => {
    const { code } = await obtainCode(t, f);
    const { registerApp } = await import('../../src/domain/apps.js');
    const other = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: 'Other', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false });
    const stolen = await exchangeCode(t, f, code, { client_id: other.app.clientId, client_secret: other.clientSecret! });
    assert.equal(stolen.json().error, 'invalid_grant');
    assert.equal((await exchangeCode(t, f, 'sac_unknown')).json().error, 'invalid_grant');
    // The rightful client still can.
    assert.equal((await exchangeCode(t, f, code)).statusCode, 200);
  });

  it('checks PKCE: missing or wrong verifier refused, the right one accepted', async () => {
    const pair = pkce();
    const { code } = await obtainCode(t, f, { code_challenge: pair.challenge, code_challenge_method: 'S256' });
    const missing = await exchangeCode(t, f, code);
    assert.equal(missing.json().error, 'invalid_grant');
    const wrong = await exchangeCode(t, f, code, { code_verifier: pkce().verifier });
    assert.equal(wrong.json().error, 'invalid_grant');
    const ok = await exchangeCode(t, f, code, { code_verifier: pair.verifier });
    assert.equal(ok.statusCode, 200);
  });

  it('refuses a code_verifier for a code issued without a challenge', async () => {
    const { code } = await obtainCode(t, f);
    assert.equal((await exchangeCode(t, f, code, { code_verifier: pkce().verifier })).json().error, 'invalid_grant');
  });

  it('serves a public client with PKCE and client_id alone; refuses a secret for it', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, f.password);
    const pair = pkce();
    const back = await authorizeAndAllow(browser, authorizeUrl({
      response_type: 'code', client_id: f.publicApp.clientId, redirect_uri: 'com.example.walker:/cb',
      code_challenge: pair.challenge, code_challenge_method: 'S256',
    }));
    const code = back.searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: 'com.example.walker:/cb', client_id: f.publicApp.clientId };
    assert.equal((await tokenRequest(t, { ...form, client_secret: 'guess' })).statusCode, 401);
    assert.equal((await tokenRequest(t, form)).json().error, 'invalid_grant', 'no verifier');
    const ok = await tokenRequest(t, { ...form, code_verifier: pair.verifier });
    assert.equal(ok.statusCode, 200, ok.body);
    const tokens = ok.json();
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: f.publicApp.clientId });
    assert.equal(refreshed.statusCode, 200);
  });

  it('authenticates the client before any grant: a wrong client hears invalid_client whatever the grant and its token', async () => {
    const tokens = await obtainTokens(t, f);
    const wrong = { client_id: f.app.clientId, client_secret: 'not the secret' };
    const forms: Array<Record<string, string>> = [
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...wrong },
      { grant_type: 'refresh_token', ...wrong },
      { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI, ...wrong },
      { grant_type: 'password', ...wrong },
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'sc_no_such_client' },
    ];
    for (const form of forms) {
      const response = await tokenRequest(t, form);
      assert.equal(response.statusCode, 401, JSON.stringify(form));
      assert.equal(response.json().error, 'invalid_client');
    }
    // The refresh token sent with the wrong client was not used.
    assert.equal((await refresh(t, f, tokens.refresh_token)).statusCode, 200);
  });

  it('answers bad requests with the codes of docs/oauth.md', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ client_id: f.app.clientId, client_secret: f.secret }, 400, 'invalid_request'],
      [{ grant_type: 'password', client_id: f.app.clientId, client_secret: f.secret }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'authorization_code', client_id: f.app.clientId, client_secret: f.secret, redirect_uri: REDIRECT_URI }, 400, 'invalid_request'],
      [{ grant_type: 'refresh_token', client_id: f.app.clientId, client_secret: f.secret }, 400, 'invalid_request'],
      [{ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI }, 401, 'invalid_client'],
    ];
    for (const [form, status, error] of cases) {
      const response = await tokenRequest(t, form);
      assert.equal(response.statusCode, status, JSON.stringify(form));
      assert.deepEqual(Object.keys(response.json()).sort(), ['error', 'error_description']);
      assert.equal(response.json().error, error);
    }
    const json = await t.app.inject({ method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":"refresh_token"}' });
    assert.equal(json.statusCode, 415);
    const repeated = await t.app.inject({
      method: 'POST', url: '/oauth2/token/', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=${f.app.clientId}&client_secret=${f.secret}`,
    });
    assert.equal(repeated.statusCode, 400);
    assert.equal(repeated.json().error, 'invalid_request');
  });
});
