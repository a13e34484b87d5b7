/** Sign-in, sign-up and sign-out pages: cookies, CSRF, failures that reveal nothing, rate limits. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { hashCredential } from '../../src/security/secrets.js';
import { safeReturnTo } from '../../src/web/session.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { authorizeUrl, Browser, createFixture, createOAuthTestApp, formFields, REDIRECT_URI, signIn, type Fixture } from '../oauth/flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { textOf } from './pages-support.js';

cheapPasswordHashing();

forEachDialect('sign-in and sessions', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('sets an HttpOnly, SameSite=Lax, Path=/ session cookie whose value is stored only as a hash', async () => {
    const browser = new Browser(t.app);
    const response = await signIn(browser, f.user.email, f.password);
    assert.equal(response.status, 303);
    const line = browser.setCookieHeaders.find((l) => l.startsWith('stride_session='))!;
    assert.match(line, /HttpOnly/i);
    assert.match(line, /SameSite=Lax/i);
    assert.match(line, /Path=\//);
    assert.match(line, new RegExp(`Max-Age=${t.config.sessionTtl + 86400}`), 'the cookie outlives the session by a day, to know whose a late form was');
    assert.doesNotMatch(line, /Secure/i, 'http public URL: no Secure flag');
    assert.ok(!browser.setCookieHeaders.some((l) => l.startsWith('__Host-')), 'http public URL: plain cookie names');
    assert.ok(browser.setCookieHeaders.some((l) => l.startsWith('stride_csrf=')));
    const raw = browser.cookies.get('stride_session')!;
    const rows = await t.database.db.kysely.selectFrom('sessions').select('id_hash').execute();
    assert.ok(rows.some((r) => r.id_hash === hashCredential(raw)));
    assert.ok(!rows.some((r) => r.id_hash === raw));
  });

  it('issues a new session id at every sign-in and ends the old one', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, f.password);
    const first = browser.cookies.get('stride_session')!;
    await signIn(new Browser(t.app), f.user.email, f.password);
    // Signing in again in the same browser (e.g. via the login page) replaces the id.
    // (A signed-in browser is sent past /login, so the form and its cookie come from another tab.)
    const tab = new Browser(t.app);
    const fields = formFields((await tab.get('/login')).body, '/login');
    const again = new Browser(t.app);
    again.cookies.set('stride_session', first);
    again.cookies.set('stride_csrf', tab.cookies.get('stride_csrf')!);
    const response = await again.post('/login', { ...fields, email: f.user.email, password: f.password });
    assert.equal(response.status, 303);
    assert.notEqual(again.cookies.get('stride_session'), first);
    const old = new Browser(t.app);
    old.cookies.set('stride_session', first);
    assert.equal((await old.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI }))).location().pathname, '/login');
  });

  it('says the same thing for an unknown email and a wrong password', async () => {
    const unknown = await signIn(new Browser(t.app), 'nobody@example.com', f.password);
    const wrong = await signIn(new Browser(t.app), f.user.email, 'wrong password');
    assert.equal(unknown.status, 401);
    assert.equal(wrong.status, 401);
    const message = (body: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(body)?.[1];
    assert.ok(message(unknown.body));
    assert.equal(message(unknown.body), message(wrong.body));
    // The pages differ only in the echoed email and the CSRF token.
    const strip = (body: string, email: string) => body.replace(/value="[A-Za-z0-9_-]{43}"/g, '').replace(email, '');
    assert.equal(strip(unknown.body, 'nobody@example.com'), strip(wrong.body, f.user.email));
  });

  it('refuses a sign-in form without the double-submit CSRF token', async () => {
    const browser = new Browser(t.app);
    const page = await browser.get('/login');
    const fields = formFields(page.body, '/login');
    const missing = await browser.post('/login', { return_to: '/account', email: f.user.email, password: f.password });
    assert.equal(missing.status, 403);
    const wrong = await browser.post('/login', { ...fields, csrf_token: 'x'.repeat(43), email: f.user.email, password: f.password });
    assert.equal(wrong.status, 403);
    // A cross-site form cannot know the cookie: no cookie at all is refused too.
    const noCookie = await new Browser(t.app).post('/login', { ...fields, email: f.user.email, password: f.password });
    assert.equal(noCookie.status, 403);
    assert.equal(browser.cookies.has('stride_session'), false);
  });

  it('never redirects off-site after sign-in (return_to must be a local path)', async () => {
    for (const evil of ['https://evil.example/', '//evil.example/', '/\\evil.example', '/\t/evil.example', 'javascript:alert(1)', 'evil.example']) {
      const response = await signIn(new Browser(t.app), f.user.email, f.password, evil);
      assert.equal(response.status, 303);
      assert.equal(response.headers.location, '/account', evil);
    }
    const ok = await signIn(new Browser(t.app), f.user.email, f.password, '/oauth2/authorize?client_id=x');
    assert.equal(ok.headers.location, '/oauth2/authorize?client_id=x');
    assert.equal(safeReturnTo('/a//b'), '/a//b');
  });

  it('signs in with a non-ASCII return_to, sent on percent-encoded as UTF-8 (query, raw form field, sign-up)', async () => {
    const cases: Array<[string, string]> = [
      ['/€', '/%E2%82%AC'],
      ['/ü/x?q=ö ü', '/%C3%BC/x?q=%C3%B6%20%C3%BC'],
      ['/\u{1F6B6}\u200f', '/%F0%9F%9A%B6%E2%80%8F'],
    ];
    for (const [returnTo, expected] of cases) {
      const viaQuery = await signIn(new Browser(t.app), f.user.email, f.password, returnTo);
      assert.equal(viaQuery.status, 303, viaQuery.body.slice(0, 300));
      assert.equal(viaQuery.headers.location, expected);
      const browser = new Browser(t.app);
      const page = await browser.get('/login');
      const rawField = await browser.post('/login', { ...formFields(page.body, '/login'), return_to: returnTo, email: f.user.email, password: f.password });
      assert.equal(rawField.status, 303, rawField.body.slice(0, 300));
      assert.equal(rawField.headers.location, expected);
      assert.ok(browser.cookies.has('stride_session'), 'signed in');
    }
    // Raw UTF-8 in the page's query string.
    const rawQuery = await t.app.inject({ method: 'GET', url: '/login?return_to=/€' });
    assert.equal(rawQuery.statusCode, 200);
    assert.match(rawQuery.body, /name="return_to" value="\/%E2%82%AC"/);
    // Sign-up carries it on to the sign-in page, then back.
    const browser = new Browser(t.app);
    const signupPage = await browser.get('/signup');
    const email = `euro-${Date.now()}@example.com`;
    const signedUp = await browser.post('/signup', { ...formFields(signupPage.body, '/signup'), return_to: '/€', email, password: 'long enough password' });
    assert.equal(signedUp.status, 303, signedUp.body.slice(0, 300));
    assert.equal(signedUp.location().searchParams.get('return_to'), '/%E2%82%AC');
    const back = await signIn(browser, email, 'long enough password', signedUp.location().searchParams.get('return_to')!);
    assert.equal(back.headers.location, '/%E2%82%AC');
    // A lone surrogate cannot be encoded: the fallback.
    assert.equal(safeReturnTo('/\ud800x'), '/account');
  });

  it('signs out with POST /logout (CSRF-checked), deleting the session', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, f.password);
    const consent = await browser.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, prompt: 'consent' }));
    const logoutFields = formFields(consent.body, '/logout');
    const raw = browser.cookies.get('stride_session')!;
    const forged = await browser.post('/logout', { csrf_token: 'forged' });
    assert.equal(forged.status, 403);
    const response = await browser.post('/logout', logoutFields);
    assert.equal(response.status, 303);
    assert.equal(response.headers.location, '/login?signed_out=1');
    assert.match((await browser.get('/login?signed_out=1')).body, /You are signed out/);
    assert.equal(browser.cookies.has('stride_session'), false);
    const row = await t.database.db.kysely.selectFrom('sessions').select('id_hash').where('id_hash', '=', hashCredential(raw)).executeTakeFirst();
    assert.equal(row, undefined);
  });

  it('ends a session after SESSION_TTL', async () => {
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const url = authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, prompt: 'consent' });
    // The session works up to its last second: the consent page, not the sign-in page.
    t.clock.advance(t.config.sessionTtl - 1);
    const before = await browser.get(url);
    assert.equal(before.status, 200, before.body.slice(0, 300));
    assert.match(before.body, /action="\/oauth2\/authorize"/);
    t.clock.advance(1);
    const response = await browser.get(url);
    assert.equal(response.status, 302);
    assert.equal(response.location().pathname, '/login');
  });

  it('a session starts seen: the pages right after sign-in write nothing, a page a minute later records the visit', async () => {
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    const idHash = hashCredential(browser.cookies.get('stride_session')!);
    const row = () => t.database.db.kysely.selectFrom('sessions').select(['created_at', 'last_seen_at']).where('id_hash', '=', idHash).executeTakeFirstOrThrow();
    const started = await row();
    assert.equal(started.last_seen_at, started.created_at, 'seen when it starts');
    const url = authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, prompt: 'consent' });
    t.clock.advance(30);
    assert.equal((await browser.get(url)).status, 200);
    assert.deepEqual(await row(), started, 'within the minute: nothing written');
    t.clock.advance(31);
    assert.equal((await browser.get(url)).status, 200);
    assert.equal((await row()).last_seen_at, started.created_at + 61);
  });

  it('sign-up validates input; a taken email is answered like a new one and changes nothing', async () => {
    const browser = new Browser(t.app);
    const page = await browser.get('/signup');
    const fields = formFields(page.body, '/signup');
    const short = await browser.post('/signup', { ...fields, email: 'short@example.com', password: 'short' });
    assert.equal(short.status, 400);
    assert.match(textOf(short.body, 'password-error') ?? '', /needs at least 8/);
    const taken = await browser.post('/signup', { ...fields, email: f.user.email.toUpperCase(), password: 'long enough password' });
    assert.equal(taken.status, 303);
    assert.equal(taken.location().pathname, '/login');
    assert.equal(browser.cookies.has('stride_session'), false);
    // The account keeps its password; the one typed at sign-up does not sign in.
    assert.equal((await signIn(new Browser(t.app), f.user.email, 'long enough password')).status, 401);
    assert.equal((await signIn(new Browser(t.app), f.user.email, f.password)).status, 303);
    // The sign-in page it leads to is worded for both outcomes.
    const next = await browser.get(taken.location().pathname + taken.location().search);
    assert.match(next.body, /id="notice"[^>]*>Sign in with the email and password you just chose/);
  });

  it('serves the stylesheet itself', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/assets/stride.css' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/css/);
  });
});

forEachDialect('sessions on an https public URL', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { PUBLIC_URL: 'https://stride.example' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('names the session and CSRF cookies __Host-…, Secure, Path=/ and without Domain', async () => {
    const browser = new Browser(t.app, 'https://stride.example');
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    for (const name of ['__Host-stride_session', '__Host-stride_csrf']) {
      const line = browser.setCookieHeaders.find((l) => l.startsWith(`${name}=`));
      assert.ok(line, `${name} in ${JSON.stringify(browser.setCookieHeaders)}`);
      assert.match(line, /; Secure/i, name);
      assert.match(line, /; Path=\/(;|$)/, name);
      assert.doesNotMatch(line, /Domain=/i, name);
    }
    assert.ok(!browser.setCookieHeaders.some((l) => /^stride_/.test(l)), 'no cookie under a plain name');
    // The signed-in session is read back from the prefixed cookie.
    assert.equal((await browser.get('/account')).status, 200);
  });

  it('ignores a session cookie under the plain name', async () => {
    const browser = new Browser(t.app, 'https://stride.example');
    await signIn(browser, f.user.email, f.password);
    const planted = new Browser(t.app, 'https://stride.example');
    planted.cookies.set('stride_session', browser.cookies.get('__Host-stride_session')!);
    assert.equal((await planted.get('/account')).location().pathname, '/login');
  });
});

forEachDialect('sign-in rate limit', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '3/min' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('answers 429 rate_limited with Retry-After once the limit is spent', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await signIn(new Browser(t.app), f.user.email, 'wrong password');
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    assert.equal(last!.json().error, 'rate_limited');
    assert.ok(Number(last!.headers['retry-after']) > 0);
    // Even the right password is refused while limited.
    assert.equal((await signIn(new Browser(t.app), f.user.email, f.password)).status, 429);
    // Other endpoints are not limited by the sign-in counter.
    assert.equal((await t.app.inject({ method: 'GET', url: '/login' })).statusCode, 200);
  });
});
