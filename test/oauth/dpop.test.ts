/**
 * DPoP (RFC 9449) driven by two certified client libraries, oauth4webapi (`DPoP()`) and
 * openid-client (`getDPoPHandle`), against Stride on 127.0.0.1: the code exchange, resource calls,
 * refresh, introspection and revocation with DPoP-bound tokens, and the nonce dance. Then the
 * failures other servers have had, with proofs made by hand: a bound refresh token without a proof,
 * a proof without or with a wrong `ath`, bearer tokens for an app that requires DPoP, a proof
 * replayed, from the future, for another URL or method, and a bound token sent as Bearer.
 */
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, generateKeyPair as generateNodeKeyPair, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, calculateJwkThumbprint, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { registerApp } from '../../src/domain/apps.js';
import { DPOP_NONCE_PERIOD } from '../../src/oauth/dpop.js';
import type { TestApp } from '../support/app.js';
import { onOneDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { authorizeAndAllow, Browser, createFixture, createOAuthTestApp, PROTECTED_PATH, signIn, type Fixture } from './flow.js';
import { insecure, listeningStride, pkceAuthorizationUrl } from './listening.js';

cheapPasswordHashing();

const redirectUri = 'http://127.0.0.1:9/callback';

interface KeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** A DPoP proof made by hand; `claims` overrides or (undefined) removes the usual ones. */
async function handProof(keys: KeyPair, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const jwk = await exportJWK(keys.publicKey);
  const payload: Record<string, unknown> = { jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...header }).sign(keys.privateKey);
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A server on a free loopback port, its metadata, and a signed-in person to authorize apps. */
async function startServer(dialect: Parameters<typeof createOAuthTestApp>[0], env: Record<string, string> = {}) {
  const listening = await listeningStride(dialect, env);
  return { ...listening, f: await createFixture(listening.t) };
}

/** Signs in and allows; returns the callback URL with the code, and the PKCE verifier and state. */
async function browserAuthorize(issuer: URL, as: oauth.AuthorizationServer, f: Fixture, clientId: string, scope: string) {
  const { url, verifier, state } = await pkceAuthorizationUrl(as, clientId, redirectUri, scope);
  const browser = new Browser(null, issuer.origin);
  const login = (await browser.get(url.pathname + url.search)).location();
  const signedIn = await signIn(browser, f.user.email, f.password, login.searchParams.get('return_to')!);
  const back = await authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
  return { back, verifier, state };
}

/**
 * A real RSA key whose public exponent is about as long as its modulus, with the private exponent
 * that matches it: the proofs it signs are valid, and checking one costs many times an ordinary
 * key's check. Made once for the file (its modulus is a generated key's, which takes a while).
 */
let heavyKey: { publicJwk: { kty: 'RSA'; n: string; e: string }; privateKey: KeyObject } | undefined;
function heavyRsaKey() {
  if (heavyKey) return heavyKey;
  const b2i = (b64: string) => BigInt(`0x${Buffer.from(b64, 'base64url').toString('hex')}`);
  const i2b = (i: bigint) => Buffer.from(i.toString(16).padStart(Math.ceil(i.toString(16).length / 2) * 2, '0'), 'hex').toString('base64url');
  const inverse = (a: bigint, m: bigint) => {
    let [r0, r1, s0, s1] = [a, m, 1n, 0n];
    while (r1 !== 0n) [r0, r1, s0, s1] = [r1, r0 - (r0 / r1) * r1, s1, s0 - (r0 / r1) * s1];
    return ((s0 % m) + m) % m;
  };
  const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
  const base = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const [p, q, n] = [b2i(base.p!), b2i(base.q!), b2i(base.n!)];
  const phi = (p - 1n) * (q - 1n);
  let e = (n >> 2n) | 1n;
  while (gcd(e, phi) !== 1n) e += 2n;
  const d = inverse(e, phi);
  const privateKey = createPrivateKey({ format: 'jwk', key: { kty: 'RSA', n: base.n!, e: i2b(e), d: i2b(d), p: base.p!, q: base.q!, dp: i2b(d % (p - 1n)), dq: i2b(d % (q - 1n)), qi: base.qi! } });
  heavyKey = { publicJwk: { kty: 'RSA', n: base.n!, e: i2b(e) }, privateKey };
  return heavyKey;
}

/**
 * An RSA key one byte over 4,096 bits, made from the start in the thread pool (it takes seconds on
 * a busy machine): the servers' clocks stand still, so a test that waited for it would push the
 * proofs of the tests after it out of their iat window.
 */
const oversizedRsaKey = promisify(generateNodeKeyPair)('rsa', { modulusLength: 4104 });

// On SQLite alone: the proofs' records and the bound tokens are tested on both databases in
// test/store/dpop-proofs.test.ts, test/store/token-rotation.test.ts and
// test/oauth/dpop-processes.ts (two processes, test/processes.test.ts).
onOneDialect('DPoP (RFC 9449) with oauth4webapi and openid-client', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let issuer: URL;
  let as: oauth.AuthorizationServer;

  // The proofs here carry the wall clock's iat, so the server's clock follows it: on a busy machine
  // the file runs longer than the 60 s a clock standing still would leave them.
  let ticking: NodeJS.Timeout | undefined;
  before(async () => {
    ({ t, f, issuer, as } = await startServer(dialect));
    ticking = setInterval(() => t.clock.set(Math.floor(Date.now() / 1000)), 200);
  });
  after(() => {
    clearInterval(ticking);
    return t.close();
  });

  const resourceUrl = () => new URL(PROTECTED_PATH, issuer);

  /** A public app's DPoP-bound pair from oauth4webapi, with its key and handle. */
  async function publicPair(scope = 'read_profile') {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: `DPoP Public ${randomUUID().slice(0, 8)}`, redirectUris: [redirectUri], scopes: ['read_profile', 'read_activity'], isPublic: true,
    });
    const c: oauth.Client = { client_id: registered.app.clientId, token_endpoint_auth_method: 'none' };
    // Extractable, so that a test can put this very key's private JWK in a proof's header.
    const keys = await oauth.generateKeyPair('ES256', { extractable: true });
    const DPoP = oauth.DPoP(c, keys);
    const { back, verifier, state } = await browserAuthorize(issuer, as, f, c.client_id, scope);
    const params = oauth.validateAuthResponse(as, c, back, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, redirectUri, verifier, { ...insecure, DPoP }),
    );
    return { c, keys, DPoP, tokens, registered };
  }

  /** A public app's DPoP-bound access token, a GET of the resource with it and a proof, and a proof's usual claims. */
  async function resourceCaller() {
    const { keys, tokens } = await publicPair();
    const token = tokens.access_token;
    const url = resourceUrl().href;
    const call = (proof: string) => fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    const claims = () => ({ htm: 'GET', htu: url, ath: ath(token) });
    return { keys, token, url, call, claims };
  }

  it('advertises exactly the proof algorithms it accepts', () => {
    assert.deepEqual(as.dpop_signing_alg_values_supported, ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256']);
  });

  it('oauth4webapi: code exchange, resource calls, refresh, introspection and revocation with DPoP (public client)', async () => {
    const { c, keys, DPoP, tokens } = await publicPair();
    assert.equal(tokens.token_type, 'dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(keys.publicKey));

    const resource = await oauth.protectedResourceRequest(tokens.access_token, 'GET', resourceUrl(), undefined, undefined, { ...insecure, DPoP });
    assert.equal(resource.status, 200);
    assert.equal((await resource.json()).user_id, f.user.id);
    // With a query too: htu is compared without it (RFC 9449 §4.3).
    const withQuery = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${PROTECTED_PATH}?x=1`, issuer), undefined, undefined, { ...insecure, DPoP });
    assert.equal(withQuery.status, 200);

    const introspection = await oauth.processIntrospectionResponse(
      as, c, await oauth.introspectionRequest(as, c, oauth.None(), tokens.access_token, insecure),
    );
    assert.equal(introspection.active, true);
    assert.equal(introspection.token_type, 'DPoP');
    assert.deepEqual(introspection.cnf, { jkt });

    const refreshed = await oauth.processRefreshTokenResponse(
      as, c, await oauth.refreshTokenGrantRequest(as, c, oauth.None(), tokens.refresh_token!, { ...insecure, DPoP }),
    );
    assert.equal(refreshed.token_type, 'dpop');
    const again = await oauth.protectedResourceRequest(refreshed.access_token, 'GET', resourceUrl(), undefined, undefined, { ...insecure, DPoP });
    assert.equal(again.status, 200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, oauth.None(), refreshed.refresh_token!, insecure));
    await assert.rejects(
      () => oauth.protectedResourceRequest(refreshed.access_token, 'GET', resourceUrl(), undefined, undefined, { ...insecure, DPoP }),
      (error: { response?: Response }) => error.response?.status === 401,
    );
  });

  it('openid-client: code exchange, resource call, refresh and introspection with getDPoPHandle (confidential client)', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'DPoP Confidential', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: false,
    });
    const config = await client.discovery(issuer, registered.app.clientId, undefined, client.ClientSecretBasic(registered.clientSecret!), {
      algorithm: 'oauth2', execute: [client.allowInsecureRequests],
    });
    const keys = await client.randomDPoPKeyPair('ES256');
    const DPoP = client.getDPoPHandle(config, keys);
    const { back, verifier, state } = await browserAuthorize(issuer, as, f, registered.app.clientId, 'read_profile');
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state }, undefined, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
    const resource = await client.fetchProtectedResource(config, tokens.access_token, resourceUrl(), 'GET', undefined, undefined, { DPoP });
    assert.equal(resource.status, 200);
    const me = await client.fetchProtectedResource(config, tokens.access_token, new URL('/v1/users/me', issuer), 'GET', undefined, undefined, { DPoP });
    assert.equal(me.status, 200);

    // A confidential client's refresh token is bound by its authentication, not to the key (RFC 9449 §5).
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    assert.equal(refreshed.token_type, 'dpop');
    const introspection = await client.tokenIntrospection(config, refreshed.access_token);
    assert.deepEqual(introspection.cnf, { jkt: await calculateJwkThumbprint(await exportJWK(keys.publicKey)) });
    await client.tokenRevocation(config, refreshed.access_token);
    const revoked = await client.fetchProtectedResource(config, refreshed.access_token, resourceUrl(), 'GET', undefined, undefined, { DPoP }).catch((error: { status?: number }) => error);
    assert.equal((revoked as { status?: number }).status, 401);
  });

  it('refuses a bound refresh token without a proof, and with a proof of another key', async () => {
    const { tokens, registered } = await publicPair();
    const tokenUrl = new URL('/oauth2/token', issuer);
    const body = () => new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: registered.app.clientId });
    const without = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body() });
    assert.equal(without.status, 400);
    assert.equal((await without.json()).error, 'invalid_dpop_proof');
    const otherKey = await generateKeyPair('ES256');
    const other = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await handProof(otherKey, { htm: 'POST', htu: tokenUrl.href }) },
      body: body(),
    });
    assert.equal(other.status, 400);
    assert.equal((await other.json()).error, 'invalid_grant');
  });

  it('refuses a bound token sent as Bearer, and proofs without ath, with a wrong ath, replayed, from the future, for another URL or method', async () => {
    const { keys, tokens } = await publicPair();
    const token = tokens.access_token;
    const url = resourceUrl().href;
    const call = (proof: string | undefined, scheme = 'DPoP', method = 'GET') =>
      fetch(url, { method, headers: { authorization: `${scheme} ${token}`, ...(proof !== undefined && { dpop: proof }) } });
    const refused = async (response: Response, error: string) => {
      assert.equal(response.status, 401, error);
      assert.equal((await response.json()).error, error);
      assert.match(String(response.headers.get('www-authenticate')), /DPoP algs="ES256 /);
    };

    await refused(await call(undefined, 'Bearer'), 'invalid_token');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: url }), 'Bearer'), 'invalid_token');
    await refused(await call(undefined), 'invalid_dpop_proof');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: url })), 'invalid_dpop_proof');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: url, ath: ath('another token') })), 'invalid_dpop_proof');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: url, ath: ath(token), iat: Math.floor(Date.now() / 1000) + 300 })), 'invalid_dpop_proof');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: url, ath: ath(token), iat: Math.floor(Date.now() / 1000) - 300 })), 'invalid_dpop_proof');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: new URL('/v1/users/me', issuer).href, ath: ath(token) })), 'invalid_dpop_proof');
    await refused(await call(await handProof(keys, { htm: 'POST', htu: url, ath: ath(token) })), 'invalid_dpop_proof');
    // A proof of another key for the bound token.
    await refused(await call(await handProof(await generateKeyPair('ES256'), { htm: 'GET', htu: url, ath: ath(token) })), 'invalid_token');
    // The private JWK of the very key the token is bound to and the proof is signed with: every
    // other part of the proof is right, so only the private members in the header refuse it.
    const privateJwk = await exportJWK(keys.privateKey);
    assert.ok(privateJwk.d, 'the header carries the private key');
    await refused(await call(await handProof(keys, { htm: 'GET', htu: url, ath: ath(token) }, { jwk: privateJwk })), 'invalid_dpop_proof');

    const good = await handProof(keys, { htm: 'GET', htu: url, ath: ath(token) });
    assert.equal((await call(good)).status, 200);
    await refused(await call(good), 'invalid_dpop_proof');
  });

  it('refuses an unbound token under the DPoP scheme, whatever the proof (RFC 9449 §4.3 step 12, §7.1)', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Bearer Public', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
    });
    const c: oauth.Client = { client_id: registered.app.clientId, token_endpoint_auth_method: 'none' };
    const { back, verifier, state } = await browserAuthorize(issuer, as, f, c.client_id, 'read_profile');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), oauth.validateAuthResponse(as, c, back, state), redirectUri, verifier, insecure),
    );
    assert.equal(tokens.token_type, 'bearer');
    const url = resourceUrl().href;
    const keys = await generateKeyPair('ES256');
    const asDpop = await fetch(url, { headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await handProof(keys, { htm: 'GET', htu: url, ath: ath(tokens.access_token) }) } });
    assert.equal(asDpop.status, 401);
    assert.equal((await asDpop.json()).error, 'invalid_token');
    assert.match(String(asDpop.headers.get('www-authenticate')), /DPoP algs="[^"]+", error="invalid_token"/);
    // As what it is, it works.
    assert.equal((await fetch(url, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status, 200);
  });

  it('refuses proofs signed with none or a symmetric key, of a key of another type than alg, and for another htu or htm spelling', async () => {
    const { keys, token, url, call, claims } = await resourceCaller();
    const refused = async (proof: string, what: string) => {
      const response = await call(proof);
      assert.equal(response.status, 401, what);
      assert.equal((await response.json()).error, 'invalid_dpop_proof', what);
    };
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const publicJwk = await exportJWK(keys.publicKey);
    const payload = () => ({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims() });
    await refused(`${b64({ alg: 'none', typ: 'dpop+jwt', jwk: publicJwk })}.${b64(payload())}.`, 'alg none, no signature');
    await refused(`${b64({ alg: 'none', typ: 'dpop+jwt', jwk: publicJwk })}.${b64(payload())}.AAAA`, 'alg none, some signature');
    const secret = new TextEncoder().encode('a shared secret of thirty-two by');
    const hmac = await new SignJWT(payload()).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: Buffer.from(secret).toString('base64url') } as object as Record<string, string> }).sign(secret);
    await refused(hmac, 'HS256 with an oct jwk');
    const rsa = await generateKeyPair('RS256');
    const rsaSigned = await new SignJWT(payload()).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(rsa.publicKey) }).sign(keys.privateKey);
    await refused(rsaSigned, 'ES256 with an RSA jwk');
    await refused(await handProof(keys, claims(), { typ: 'JWT' }), 'typ JWT');
    await refused(await handProof(keys, { ...claims(), htm: 'get' }), 'htm in lower case');
    await refused(await handProof(keys, { ...claims(), htu: `${url}/` }), 'htu with a trailing slash');
    await refused(await handProof(keys, { ...claims(), htu: url.replace('http://', 'https://') }), 'htu of another scheme');
    const port = Number(new URL(url).port);
    await refused(await handProof(keys, { ...claims(), htu: url.replace(`:${port}`, `:${port + 1}`) }), 'htu of another port');
    await refused(await handProof(keys, { ...claims(), htu: url.replace('127.0.0.1', 'localhost') }), 'htu of another host');
    await refused(await handProof(keys, { ...claims(), iat: String(Math.floor(Date.now() / 1000)) }), 'iat as a string');
    await refused(await handProof(keys, { ...claims(), jti: undefined }), 'no jti');
    const two = await fetch(url, { headers: [['authorization', `DPoP ${token}`], ['dpop', await handProof(keys, claims())], ['dpop', await handProof(keys, claims())]] });
    assert.equal(two.status, 401, 'two DPoP headers');
    // The same proof but for query and fragment, and with the host in capitals, is the same htu (§4.3, RFC 3986 §6.2.2).
    const spelled = `${new URL(url).origin.toUpperCase()}${new URL(url).pathname}?a=1#f`;
    const same = await call(await handProof(keys, { ...claims(), htu: spelled }));
    assert.equal(same.status, 200, `${spelled}: ${await same.text()}`);
  });

  it('refuses htu spellings a URL parser reads as this URL but RFC 3986 does not: user info, white space, backslashes, IPv4 addresses written otherwise', async () => {
    const { keys, url, call, claims } = await resourceCaller();
    const { port, pathname } = new URL(url);
    for (const htu of [
      url.replace('http://', 'http://user@'), url.replace('http://', 'http://user:pw@'), url.replace('http://', 'http://@'),
      ` ${url}`, `${url} `, `\t${url}`, `${url}\n`, url.replace('/protected', '/\tprotected'),
      url.replace('http://', 'http:\\\\'), url.replaceAll('/', '\\'), url.replace('http://', 'http:'), url.replace('http://', 'http:/'),
      `http://2130706433:${port}${pathname}`, `http://127.1:${port}${pathname}`, `http://0x7f.0.0.1:${port}${pathname}`, `http://0177.0.0.1:${port}${pathname}`,
      `http://127.0.0.1.:${port}${pathname}`, `http://%31%32%37.0.0.1:${port}${pathname}`,
    ]) {
      const parsed = new URL(htu);
      assert.equal(parsed.origin + parsed.pathname, url, `a URL parser reads ${JSON.stringify(htu)} as this URL`);
      const response = await call(await handProof(keys, { ...claims(), htu }));
      assert.equal(response.status, 401, JSON.stringify(htu));
      assert.equal((await response.json()).error, 'invalid_dpop_proof', JSON.stringify(htu));
    }
    // RFC 3986 §6.2.2–6.2.3 normalisation still applies: letter case of scheme and host, the default port, dot segments.
    const spelled = `HTTP://127.0.0.1:${port}/v1/../${pathname.slice(1)}`;
    const same = await call(await handProof(keys, { ...claims(), htu: spelled }));
    assert.equal(same.status, 200, `${spelled}: ${await same.text()}`);
  });

  it('refuses RSA keys that make a proof costly to check: a public exponent over 32 bits (each check ~25 times the work), even in a valid proof', async () => {
    const { publicJwk, privateKey } = heavyRsaKey();
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Heavy Key', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
    });
    const tokenUrl = new URL('/oauth2/token', issuer).href;
    const proof = await new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu: tokenUrl })
      .setProtectedHeader({ alg: 'RS256', typ: 'dpop+jwt', jwk: publicJwk })
      .sign(privateKey);
    const { back, verifier } = await browserAuthorize(issuer, as, f, registered.app.clientId, 'read_profile');
    const body = new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: verifier, client_id: registered.app.clientId });
    const refused = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body });
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error, 'invalid_dpop_proof');
  });

  it('refuses a proof over 8 KB and a jti over 256 characters (docs/oauth.md, "Sender-constrained tokens"), and takes them at the limit', async () => {
    const { keys, call, claims } = await resourceCaller();
    const refused = async (proof: string, what: string) => {
      const response = await call(proof);
      assert.equal(response.status, 401, what);
      assert.equal((await response.json()).error, 'invalid_dpop_proof', what);
    };
    // A claim of padding brings a valid proof to a chosen length.
    const sized = async (length: number) => {
      const bare = (await handProof(keys, { ...claims(), pad: '' })).length;
      // Base64url: four characters for each three bytes of the payload's JSON.
      let pad = Math.max(0, Math.floor(((length - bare) * 3) / 4));
      let proof = await handProof(keys, { ...claims(), pad: 'x'.repeat(pad) });
      while (proof.length < length) proof = await handProof(keys, { ...claims(), pad: 'x'.repeat(++pad) });
      return proof;
    };
    const atLimit = await sized(8100);
    assert.ok(atLimit.length <= 8192);
    assert.equal((await call(atLimit)).status, 200, `a valid proof of ${atLimit.length} characters`);
    const over = await sized(8193);
    assert.ok(over.length > 8192 && over.length < 8200);
    await refused(over, `a valid proof of ${over.length} characters`);

    assert.equal((await call(await handProof(keys, { ...claims(), jti: 'j'.repeat(256) }))).status, 200, 'a jti of 256 characters');
    await refused(await handProof(keys, { ...claims(), jti: 'k'.repeat(257) }), 'a jti of 257 characters');
  });

  it('refuses a valid proof signed by an RSA key over 4,096 bits (RFC 7518 §6.3.1; docs/oauth.md)', async () => {
    const { privateKey, publicKey } = await oversizedRsaKey;
    const { call, claims } = await resourceCaller();
    const jwk = publicKey.export({ format: 'jwk' });
    assert.equal(Buffer.from(jwk.n!, 'base64url').length, 513, 'a modulus of 513 bytes');
    const proof = await new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims() })
      .setProtectedHeader({ alg: 'RS256', typ: 'dpop+jwt', jwk: { kty: 'RSA', n: jwk.n!, e: jwk.e! } })
      .sign(privateKey);
    // Of another key than the token's: a key the server took would then answer invalid_token.
    const response = await call(proof);
    assert.equal(response.status, 401);
    assert.equal((await response.json()).error, 'invalid_dpop_proof');
  });

  it('checks the signature of every proof of a key it has seen: the key in the header, signed by another, is refused', async () => {
    const { keys, token, url, call } = await resourceCaller();
    // The key is imported (and kept) by the first proofs.
    for (let i = 0; i < 3; i++) assert.equal((await call(await handProof(keys, { htm: 'GET', htu: url, ath: ath(token) }))).status, 200);
    const forged = await handProof(await generateKeyPair('ES256'), { htm: 'GET', htu: url, ath: ath(token) }, { jwk: await exportJWK(keys.publicKey) });
    const refused = await call(forged);
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error, 'invalid_dpop_proof');
    assert.equal((await call(await handProof(keys, { htm: 'GET', htu: url, ath: ath(token) }))).status, 200);
  });

  it('refuses a proof whose header is a kept key\'s but whose signature or claims set is not that key\'s', async () => {
    const { keys, call, claims } = await resourceCaller();
    const refused = async (proof: string, why: string) => {
      const answer = await call(proof);
      assert.equal(answer.status, 401, why);
      assert.equal((await answer.json()).error, 'invalid_dpop_proof', why);
    };
    assert.equal((await call(await handProof(keys, claims()))).status, 200);
    const [header, payload, signature] = (await handProof(keys, claims())).split('.') as [string, string, string];
    // Another payload under a valid signature of the header and the first payload.
    const [, otherPayload] = (await handProof(keys, claims())).split('.');
    await refused(`${header}.${otherPayload}.${signature}`, 'the signature of another payload');
    // The signature's bytes changed; cut short; not base64url; a part too many or too few.
    const flipped = Buffer.from(signature, 'base64url');
    flipped[5]! ^= 1;
    await refused(`${header}.${payload}.${flipped.toString('base64url')}`, 'a changed signature');
    await refused(`${header}.${payload}.${signature.slice(0, 40)}`, 'a short signature');
    await refused(`${header}.${payload}.${signature.slice(0, -2)}+/`, 'a signature that is not base64url');
    await refused(`${header}.${payload}.${signature}.${signature}`, 'four parts');
    await refused(`${header}.${payload}`, 'two parts');
    // Claims sets jose refuses too, signed by the key under its kept header.
    const signed = async (body: unknown) => {
      const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
      const input = new TextEncoder().encode(`${header}.${encoded}`);
      const raw = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, input);
      return `${header}.${encoded}.${Buffer.from(raw).toString('base64url')}`;
    };
    const now = Math.floor(Date.now() / 1000);
    assert.equal((await call(await signed({ jti: randomUUID(), iat: now, ...claims() }))).status, 200, 'the same claims, signed alike');
    await refused(await signed([{ jti: randomUUID(), iat: now, ...claims() }]), 'an array');
    await refused(await signed({ jti: randomUUID(), iat: now, exp: now - 300, ...claims() }), 'exp past');
    await refused(await signed({ jti: randomUUID(), iat: now, nbf: now + 300, ...claims() }), 'nbf ahead');
    await refused(await signed({ jti: randomUUID(), iat: String(now), ...claims() }), 'iat a string');
    // The proof itself, sent again.
    const good = await signed({ jti: randomUUID(), iat: now, ...claims() });
    assert.equal((await call(good)).status, 200);
    await refused(good, 'a replay');
  });

  it('tells apart two keys with the same kid: each header is verified as its own', async () => {
    const { keys, call, claims } = await resourceCaller();
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'device-1' };
    for (let i = 0; i < 2; i++) assert.equal((await call(await handProof(keys, claims(), { jwk }))).status, 200);
    const other = await generateKeyPair('ES256');
    const otherJwk = { ...(await exportJWK(other.publicKey)), kid: 'device-1' };
    // Its own key under the same kid: a valid proof, of a key the token is not bound to.
    const otherKey = await call(await handProof(other, claims(), { jwk: otherJwk }));
    assert.equal(otherKey.status, 401);
    assert.equal((await otherKey.json()).error, 'invalid_token');
    // The kept key's header, signed by the other key.
    const forged = await call(await handProof(other, claims(), { jwk }));
    assert.equal(forged.status, 401);
    assert.equal((await forged.json()).error, 'invalid_dpop_proof');
    assert.equal((await call(await handProof(keys, claims(), { jwk }))).status, 200);
  });

  it('refuses padding and whitespace in a proof on first use of its header as after (RFC 7515 §2)', async () => {
    const { keys, call, claims } = await resourceCaller();
    // jose's decoder (atob) skips whitespace and takes padding: each of these was taken on first use.
    const defects: Record<string, (proof: string) => string> = {
      'a space in the signature': (proof) => `${proof.slice(0, -20)} ${proof.slice(-20)}`,
      'a tab in the signature': (proof) => `${proof.slice(0, -20)}\t${proof.slice(-20)}`,
      'the signature padded': (proof) => `${proof}==`,
    };
    for (const [why, defect] of Object.entries(defects)) {
      // A kid never sent before: the header's text is new, so its first proof goes through jose.
      const header = { jwk: { ...(await exportJWK(keys.publicKey)), kid: randomUUID() } };
      const first = await call(defect(await handProof(keys, claims(), header)));
      assert.equal(first.status, 401, `${why}, first use`);
      assert.equal((await first.json()).error, 'invalid_dpop_proof', `${why}, first use`);
      assert.equal((await call(await handProof(keys, claims(), header))).status, 200, `${why}: the header's good proof`);
      const kept = await call(defect(await handProof(keys, claims(), header)));
      assert.equal(kept.status, 401, `${why}, kept header`);
      assert.equal((await kept.json()).error, 'invalid_dpop_proof', `${why}, kept header`);
    }
  });

  it('answers a refresh retried within the replay window with the same DPoP-bound pair', async () => {
    const { c, DPoP, tokens } = await publicPair();
    const refresh = async () =>
      oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, oauth.None(), tokens.refresh_token!, { ...insecure, DPoP }));
    const first = await refresh();
    const retried = await refresh();
    assert.equal(retried.token_type, 'dpop');
    assert.equal(retried.access_token, first.access_token);
    assert.equal(retried.refresh_token, first.refresh_token);
    // The successor is bound to the key as well.
    const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: c.client_id });
    const without = await fetch(new URL('/oauth2/token', issuer), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    assert.equal((await without.json()).error, 'invalid_dpop_proof');
  });

  it('accepts proofs of every advertised algorithm, and binds the token to that key', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'DPoP Algorithms', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
    });
    const tokenUrl = new URL('/oauth2/token', issuer).href;
    for (const alg of as.dpop_signing_alg_values_supported!) {
      const keys = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
      const { back, verifier } = await browserAuthorize(issuer, as, f, registered.app.clientId, 'read_profile');
      const body = new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: verifier, client_id: registered.app.clientId });
      const proof = await handProof(keys, { htm: 'POST', htu: tokenUrl }, { alg });
      const answer = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body });
      assert.equal(answer.status, 200, `${alg}: ${await answer.clone().text()}`);
      const { access_token: token } = await answer.json();
      // The same header again: checked with the key kept from the first proof.
      const call = (proof: string) => fetch(resourceUrl(), { headers: { authorization: `DPoP ${token}`, dpop: proof } });
      for (let i = 0; i < 2; i++) assert.equal((await call(await handProof(keys, { htm: 'GET', htu: resourceUrl().href, ath: ath(token) }, { alg }))).status, 200, alg);
      // That header, signed by another key of the algorithm.
      const jwk = await exportJWK(keys.publicKey);
      const forger = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
      const forged = await call(await handProof(forger, { htm: 'GET', htu: resourceUrl().href, ath: ath(token) }, { alg, jwk }));
      assert.equal(forged.status, 401, alg);
      assert.equal((await forged.json()).error, 'invalid_dpop_proof', alg);
    }
  });

  it('refuses a replayed proof at the token endpoint', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'DPoP Replay', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
    });
    const keys = await generateKeyPair('ES256');
    const tokenUrl = new URL('/oauth2/token', issuer).href;
    const proof = await handProof(keys, { htm: 'POST', htu: tokenUrl });
    const { back, verifier } = await browserAuthorize(issuer, as, f, registered.app.clientId, 'read_profile');
    const body = new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: verifier, client_id: registered.app.clientId });
    const first = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body });
    assert.equal(first.status, 200);
    assert.equal((await first.json()).token_type, 'DPoP');
    const second = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof }, body });
    assert.equal(second.status, 400);
    assert.equal((await second.json()).error, 'invalid_dpop_proof');
  });

  it('issues no bearer token to an app that requires DPoP', async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'DPoP Required', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true, requireDpop: true,
    });
    const c: oauth.Client = { client_id: registered.app.clientId, token_endpoint_auth_method: 'none' };
    const { back, verifier, state } = await browserAuthorize(issuer, as, f, c.client_id, 'read_profile');
    const params = oauth.validateAuthResponse(as, c, back, state);
    const bearer = await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, redirectUri, verifier, insecure);
    assert.equal(bearer.status, 400);
    assert.equal((await bearer.json()).error, 'invalid_dpop_proof');
    // The code was not used up: the same exchange with a proof works.
    const DPoP = oauth.DPoP(c, await oauth.generateKeyPair('ES256'));
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, redirectUri, verifier, { ...insecure, DPoP }),
    );
    assert.equal(tokens.token_type, 'dpop');
  });

  describe('with DPOP_NONCE=true', () => {
    let n: Awaited<ReturnType<typeof startServer>>;
    before(async () => {
      n = await startServer(dialect, { DPOP_NONCE: 'true' });
    });
    after(() => n.t.close());

    it('asks for a nonce (use_dpop_nonce), and oauth4webapi retries with it', async () => {
      const registered = await registerApp(n.t.database.stores.apps, n.t.clock, n.f.developer.id, {
        name: 'DPoP Nonce', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
      });
      const c: oauth.Client = { client_id: registered.app.clientId, token_endpoint_auth_method: 'none' };
      const DPoP = oauth.DPoP(c, await oauth.generateKeyPair('ES256'));
      const { back, verifier, state } = await browserAuthorize(n.issuer, n.as, n.f, c.client_id, 'read_profile');
      const params = oauth.validateAuthResponse(n.as, c, back, state);
      const exchange = async () =>
        oauth.processAuthorizationCodeResponse(n.as, c, await oauth.authorizationCodeGrantRequest(n.as, c, oauth.None(), params, redirectUri, verifier, { ...insecure, DPoP }));
      let nonceAsked = false;
      const tokens = await exchange().catch(async (error: unknown) => {
        nonceAsked = oauth.isDPoPNonceError(error);
        if (!nonceAsked) throw error;
        return exchange();
      });
      assert.ok(nonceAsked, 'the first proof, without a nonce, is answered use_dpop_nonce');
      assert.equal(tokens.token_type, 'dpop');
      // The handle kept the nonce: the resource call's proof carries it.
      const resource = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(PROTECTED_PATH, n.issuer), undefined, undefined, { ...insecure, DPoP });
      assert.equal(resource.status, 200);
      // A made-up nonce is refused with a fresh one offered.
      const keys = await generateKeyPair('ES256');
      const tokenUrl = new URL('/oauth2/token', n.issuer).href;
      const refused = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await handProof(keys, { htm: 'POST', htu: tokenUrl, nonce: 'made-up' }) },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: c.client_id }),
      });
      assert.equal(refused.status, 400);
      assert.equal((await refused.json()).error, 'use_dpop_nonce');
      assert.ok(refused.headers.get('dpop-nonce'));
    });

    it('refuses a nonce it handed out two periods ago (RFC 9449 §8), and offers the current one', async () => {
      // A known public client, so that the proof is checked (after the client) and an unknown refresh token is what fails past it.
      const registered = await registerApp(n.t.database.stores.apps, n.t.clock, n.f.developer.id, {
        name: 'DPoP Stale Nonce', redirectUris: [redirectUri], scopes: ['read_profile'], isPublic: true,
      });
      const tokenUrl = new URL('/oauth2/token', n.issuer).href;
      const keys = await generateKeyPair('ES256');
      const ask = async (nonce?: string) => {
        const iat = n.t.clock();
        const response = await fetch(tokenUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await handProof(keys, { htm: 'POST', htu: tokenUrl, iat, nonce }) },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'no-such-token', client_id: registered.app.clientId }),
        });
        return { status: response.status, error: (await response.json()).error as string, nonce: response.headers.get('dpop-nonce') };
      };
      const first = await ask();
      assert.equal(first.error, 'use_dpop_nonce');
      const handedOut = first.nonce!;
      // Within its period and the next it is taken: the request gets past the proof (to its unknown refresh token).
      assert.notEqual((await ask(handedOut)).error, 'use_dpop_nonce', 'the current nonce is taken');
      n.t.clock.advance(DPOP_NONCE_PERIOD);
      assert.notEqual((await ask(handedOut)).error, 'use_dpop_nonce', 'the previous period\'s nonce is still taken');
      n.t.clock.advance(DPOP_NONCE_PERIOD);
      const stale = await ask(handedOut);
      assert.equal(stale.status, 400);
      assert.equal(stale.error, 'use_dpop_nonce', 'a nonce two periods old is refused');
      assert.ok(stale.nonce && stale.nonce !== handedOut, 'with a fresh nonce offered');
    });
  });
});
