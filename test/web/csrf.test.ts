/**
 * The sign-in and sign-up CSRF tokens are a signed double-submit pair: only a pair the server made
 * with its own key is accepted, so planting a cookie of the attacker's choosing (with the same
 * value in the form) does not sign anyone in.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import type { FastifyInstance } from 'fastify';
import { signPreSessionNonce } from '../../src/web/csrf.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { Browser, createFixture, createOAuthTestApp, formFields, type Fixture } from '../oauth/flow.js';

/** A browser holding the CSRF cookie `nonce`, posting `token` with the fixture user's credentials. */
function signInWith(app: FastifyInstance, f: Fixture, nonce: string, token: string) {
  const browser = new Browser(app);
  browser.cookies.set('stride_csrf', nonce);
  return browser.post('/login', { csrf_token: token, return_to: '/account', email: f.user.email, password: f.password });
}

/** The cookie and form token a real visit of /login hands out. */
async function issuedPair(app: FastifyInstance): Promise<{ nonce: string; token: string }> {
  const browser = new Browser(app);
  const page = await browser.get('/login');
  return { nonce: browser.cookies.get('stride_csrf')!, token: formFields(page.body, '/login').csrf_token! };
}

forEachDialect('sign-in and sign-up CSRF', (dialect) => {
  let t: TestApp;
  let other: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    other = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  it('accepts the pair the server issued', async () => {
    const { nonce, token } = await issuedPair(t.app);
    assert.notEqual(token, nonce, 'the form holds a signature of the cookie, not a copy');
    assert.equal((await signInWith(t.app, f, nonce, token)).status, 303);
  });

  it('refuses an equal cookie/field pair the attacker made up (403), on sign-in and sign-up', async () => {
    const planted = randomBytes(32).toString('base64url');
    const login = await signInWith(t.app, f, planted, planted);
    assert.equal(login.status, 403);
    const browser = new Browser(t.app);
    browser.cookies.set('stride_csrf', planted);
    const signup = await browser.post('/signup', {
      csrf_token: planted, return_to: '/account', email: `new-${randomBytes(4).toString('hex')}@example.com`, password: 'long enough password',
    });
    assert.equal(signup.status, 403);
    assert.equal(browser.cookies.has('stride_session'), false);
  });

  it('refuses a server-issued token with another cookie, and a token signed with another key', async () => {
    const { token } = await issuedPair(t.app);
    assert.equal((await signInWith(t.app, f, randomBytes(32).toString('base64url'), token)).status, 403);
    const nonce = randomBytes(32).toString('base64url');
    assert.equal((await signInWith(t.app, f, nonce, signPreSessionNonce(randomBytes(32), nonce))).status, 403);
  });

  it('refuses a pair issued by a Stride on another database', async () => {
    const foreign = await issuedPair(other.app);
    assert.equal((await signInWith(t.app, f, foreign.nonce, foreign.token)).status, 403);
  });

  it('shares its key with every process on the same database, across restarts', async () => {
    const { nonce, token } = await issuedPair(t.app);
    // A second process on the same database (or this one restarted) reads the same key.
    const second = await buildApp({ config: t.config, stores: t.database.stores, clock: t.clock });
    try {
      assert.deepEqual(await second.serverSecrets.preSessionCsrf(), await t.app.serverSecrets.preSessionCsrf());
      assert.equal((await signInWith(second, f, nonce, token)).status, 303);
    } finally {
      await second.close();
    }
  });
});
