/** The dashboard's "Require DPoP" setting (RFC 9449): set at registration, shown, and changed on the app's page. */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createFixture, createOAuthTestApp, exchangeCode, obtainCode, obtainTokens, PROTECTED_PATH, useToken, type Fixture } from '../oauth/flow.js';
import { signedIn, submit } from './pages-support.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('dashboard: require DPoP', (dialect) => {
  let t: TestApp;
  let f: Fixture;

  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('registers an app that requires DPoP, shows the box ticked, and unticks it', async () => {
    const developer = await signedIn(t, f.developer);
    const posted = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
      name: 'Bound Walker', redirect_uris: 'https://bound.example/cb', scopes: ['read_profile'], client_type: 'public', require_dpop: 'yes',
    });
    assert.equal(posted.status, 303, posted.body.slice(0, 400));
    const clientId = posted.location().pathname.split('/')[3]!;
    assert.equal((await t.database.stores.apps.findByClientId(clientId))?.requireDpop, true);

    const page = `/dashboard/apps/${clientId}`;
    const shown = await developer.get(page);
    assert.match(shown.body, /name="require_dpop" value="yes" checked/);
    // Unticked: a checkbox sends nothing.
    const saved = await submit(developer, page, page, { name: 'Bound Walker', redirect_uris: 'https://bound.example/cb', scopes: ['read_profile'] });
    assert.equal(saved.status, 303, saved.body.slice(0, 400));
    assert.equal((await t.database.stores.apps.findByClientId(clientId))?.requireDpop, false);
    const again = await submit(developer, page, page, { name: 'Bound Walker', redirect_uris: 'https://bound.example/cb', scopes: ['read_profile'], require_dpop: 'yes' });
    assert.equal(again.status, 303);
    assert.equal((await t.database.stores.apps.findByClientId(clientId))?.requireDpop, true);
  });

  it('ends the bearer access tokens the app holds when Require DPoP is ticked; its bound tokens go on', async () => {
    const keys = await generateKeyPair('ES256');
    const jwk = await exportJWK(keys.publicKey);
    const proof = (htm: string, path: string, claims: Record<string, string> = {}) =>
      new SignJWT({ jti: randomUUID(), iat: t.clock(), htm, htu: `${t.config.publicUrl}${path}`, ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(keys.privateKey);
    const bearer = await obtainTokens(t, f);
    assert.equal(bearer.token_type, 'Bearer');
    const { code } = await obtainCode(t, f);
    const boundResponse = await exchangeCode(t, f, code);
    assert.equal(boundResponse.statusCode, 200);
    const exchanged = await t.app.inject({ method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof('POST', '/oauth2/token') }, payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: boundResponse.json().refresh_token, client_id: f.app.clientId, client_secret: f.secret }).toString() });
    const bound = exchanged.json();
    assert.equal(bound.token_type, 'DPoP');
    const useBound = async () => (await t.app.inject({
      method: 'GET', url: PROTECTED_PATH,
      headers: { authorization: `DPoP ${bound.access_token}`, dpop: await proof('GET', PROTECTED_PATH, { ath: createHash('sha256').update(bound.access_token).digest('base64url') }) },
    })).statusCode;
    assert.equal(await useToken(t, bearer.access_token), 200);
    assert.equal(await useBound(), 200);

    const developer = await signedIn(t, f.developer);
    const page = `/dashboard/apps/${f.app.clientId}`;
    const ticked = await submit(developer, page, page, { name: f.app.name, redirect_uris: f.app.redirectUris.join('\n'), scopes: f.app.scopes, require_dpop: 'yes' });
    assert.equal(ticked.status, 303, ticked.body.slice(0, 400));
    assert.equal(await useToken(t, bearer.access_token), 401, 'a bearer token issued before is a bearer token all the same');
    assert.equal(await useBound(), 200, 'the bound token works on');
    const refreshed = await t.app.inject({ method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: bearer.refresh_token, client_id: f.app.clientId, client_secret: f.secret }).toString() });
    assert.equal(refreshed.json().error, 'invalid_dpop_proof', 'its refresh token gives only bound tokens now');
  });
});
