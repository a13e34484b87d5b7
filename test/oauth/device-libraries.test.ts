/**
 * The device authorization grant (RFC 8628) driven by two certified client libraries against
 * Stride listening on 127.0.0.1: oauth4webapi (deviceAuthorizationRequest, deviceCodeGrantRequest,
 * processDeviceCodeResponse) and openid-client (initiateDeviceAuthorization,
 * pollDeviceAuthorizationGrant), with a person answering at /device meanwhile.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import type { TestApp } from '../support/app.js';
import { onOneDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { answerConsent, registerDeviceApp, typeCode } from './device-flow.js';
import { Browser, createFixture, createOAuthTestApp, PROTECTED_PATH, signIn, type Fixture } from './flow.js';
import { insecure } from './listening.js';
import { freePort } from '../support/cli.js';

cheapPasswordHashing();

// On SQLite alone: the device grant itself runs on both databases in test/oauth/device.test.ts.
onOneDialect('device grant with client libraries on a real socket', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let issuer: URL;
  let clientId: string;

  before(async () => {
    const port = await freePort();
    issuer = new URL(`http://127.0.0.1:${port}`);
    // RFC 8628's 5 s would have openid-client wait that long before its first poll.
    t = await createOAuthTestApp(dialect, { PUBLIC_URL: issuer.origin, DEVICE_POLL_INTERVAL: '1' });
    await t.app.listen({ port, host: '127.0.0.1' });
    f = await createFixture(t);
    clientId = (await registerDeviceApp(t, f)).app.clientId;
  });
  after(() => t.close());

  /** The person: signs in, types the code as shown, and answers. */
  async function person(userCode: string, decision: 'allow' | 'deny'): Promise<void> {
    const browser = new Browser(null, issuer.origin);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const consent = await typeCode(browser, userCode);
    assert.equal(consent.status, 200, consent.body.slice(0, 300));
    assert.equal((await answerConsent(browser, consent.body, decision)).status, 200);
  }

  it('oauth4webapi: device authorization, authorization_pending, then tokens after the person allowed', async () => {
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    assert.equal(as.device_authorization_endpoint, `${issuer.origin}/oauth2/device_authorization`);
    const c: oauth.Client = { client_id: clientId };
    const auth = oauth.None();
    const started = await oauth.processDeviceAuthorizationResponse(as, c, await oauth.deviceAuthorizationRequest(as, c, auth, { scope: 'read_profile' }, insecure));
    assert.equal(started.verification_uri, `${issuer.origin}/device`);

    const pending = await oauth.deviceCodeGrantRequest(as, c, auth, started.device_code, insecure);
    await assert.rejects(oauth.processDeviceCodeResponse(as, c, pending), (error: unknown) => error instanceof oauth.ResponseBodyError && error.error === 'authorization_pending');

    await person(started.user_code, 'allow');
    t.clock.advance(started.interval ?? 5);
    const tokens = await oauth.processDeviceCodeResponse(as, c, await oauth.deviceCodeGrantRequest(as, c, auth, started.device_code, insecure));
    assert.equal(tokens.scope, 'read_profile');
    const profile = await fetch(new URL(PROTECTED_PATH, issuer), { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(profile.status, 200);

    t.clock.advance(started.interval ?? 5);
    const again = await oauth.deviceCodeGrantRequest(as, c, auth, started.device_code, insecure);
    await assert.rejects(oauth.processDeviceCodeResponse(as, c, again), (error: unknown) => error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant');
  });

  it('oauth4webapi: access_denied after the person denied', async () => {
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const c: oauth.Client = { client_id: clientId };
    const started = await oauth.processDeviceAuthorizationResponse(as, c, await oauth.deviceAuthorizationRequest(as, c, oauth.None(), {}, insecure));
    await person(started.user_code, 'deny');
    const denied = await oauth.deviceCodeGrantRequest(as, c, oauth.None(), started.device_code, insecure);
    await assert.rejects(oauth.processDeviceCodeResponse(as, c, denied), (error: unknown) => error instanceof oauth.ResponseBodyError && error.error === 'access_denied');
  });

  it('openid-client: initiateDeviceAuthorization, and pollDeviceAuthorizationGrant returns the tokens once the person allowed', async () => {
    const config = await client.discovery(issuer, clientId, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
    const started = await client.initiateDeviceAuthorization(config, { scope: 'read_profile read_activity' });
    assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(started.verification_uri_complete, `${issuer.origin}/device?user_code=${started.user_code}`);
    assert.equal(started.interval, 1);
    // The library waits `interval` seconds before each poll, on the wall clock; the server's clock
    // runs along with it, so that a poll on time is on time for the server too.
    const ticking = setInterval(() => t.clock.advance(1), 1000);
    let tokens: Awaited<ReturnType<typeof client.pollDeviceAuthorizationGrant>>;
    try {
      const polling = client.pollDeviceAuthorizationGrant(config, started);
      await person(started.user_code, 'allow');
      tokens = await polling;
    } finally {
      clearInterval(ticking);
    }
    assert.equal(tokens.scope, 'read_profile read_activity');
    assert.ok(tokens.refresh_token);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.ok(refreshed.access_token);
  });
});
