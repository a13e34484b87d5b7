/**
 * Errors as a browser sees them: a styled page with the same status and headers wherever the error
 * happened; programs keep the JSON error shape, and the API and the client endpoints always answer
 * JSON. No page makes the browser ask for a favicon that is not there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import type { App } from '../../src/store/apps.js';
import { authorizeUrl, Browser, createFixture, createOAuthTestApp, encodeForm, formFields, REDIRECT_URI, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { grantThroughConsent, newAccount, signedIn } from './pages-support.js';

cheapPasswordHashing();

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('errors in the browser', () => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '2/min' });
  });
  after(() => t.close());

  const isPage = (response: { headers: Record<string, unknown>; body: string }) => {
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /<link rel="stylesheet" href="\/assets\/stride.css">/);
    assert.match(String(response.headers['content-security-policy']), /default-src 'self'/);
  };

  it('answers an unknown page or asset with a 404 page, and a program with JSON', async () => {
    for (const url of ['/nope', '/assets/missing.css', '/dashboard/nothing/here']) {
      const page = await t.app.inject({ method: 'GET', url, headers: BROWSER });
      assert.equal(page.statusCode, 404, url);
      isPage(page);
      assert.match(page.body, /Page not found/);
      const program = await t.app.inject({ method: 'GET', url });
      assert.equal(program.statusCode, 404);
      assert.equal(program.json().error, 'not_found');
    }
  });

  it('keeps JSON on the API and the client endpoints, whatever the browser accepts', async () => {
    const api = await t.app.inject({ method: 'GET', url: '/v1/nothing', headers: BROWSER });
    assert.equal(api.statusCode, 404);
    assert.equal(api.json().error, 'not_found');
    const profile = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: BROWSER });
    assert.equal(profile.statusCode, 401);
    assert.equal(profile.json().error, 'invalid_token');
    const token = await t.app.inject({ method: 'POST', url: '/oauth2/token', headers: { ...BROWSER, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=password' });
    assert.equal(token.statusCode, 401);
    assert.equal(token.json().error, 'invalid_client');
  });

  it('shows the sign-in rate limit as a page with Retry-After and a way back, and JSON to programs', async () => {
    const attempt = async (headers: Record<string, string>) => {
      const form = await t.app.inject({ method: 'GET', url: '/login' });
      const cookie = String(form.headers['set-cookie']).split(';')[0]!;
      return t.app.inject({
        method: 'POST',
        url: '/login',
        headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: encodeForm({ ...formFields(form.body, '/login'), email: 'nobody@example.com', password: 'wrong password here' }),
      });
    };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await attempt(BROWSER)).statusCode);
    assert.deepEqual(statuses.slice(0, 2).map((s) => s !== 429), [true, true]);
    const limited = await attempt(BROWSER);
    assert.equal(limited.statusCode, 429);
    isPage(limited);
    assert.match(limited.body, /Too many attempts/);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    const seconds = Number(limited.headers['retry-after']);
    assert.match(limited.body, seconds < 60 ? new RegExp(`wait ${seconds} seconds`) : seconds === 60 ? /wait a minute/ : new RegExp(`wait ${Math.ceil(seconds / 60)} minutes`), 'waits in minutes from a minute up');
    assert.match(limited.body, /href="\/login"/);
    const program = await attempt({});
    assert.equal(program.statusCode, 429);
    assert.equal(program.json().error, 'rate_limited');
  });

  it('names an icon on every page, and answers /favicon.ico', async () => {
    const login = await t.app.inject({ method: 'GET', url: '/login' });
    assert.match(login.body, /<link rel="icon" href="\/assets\/favicon.svg"/);
    const icon = await t.app.inject({ method: 'GET', url: '/assets/favicon.svg' });
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['content-type'], 'image/svg+xml');
    assert.match(icon.body, /^<svg/);
    const ico = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    assert.equal(ico.statusCode, 200);
    assert.equal(ico.headers['content-type'], 'image/svg+xml');
    assert.equal(ico.body, icon.body);
  });
});

forEachDialect('error pages of a signed-in person, and their ways on', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  /** An app with a website, that `f.user` has allowed (so an error may lead back to it). */
  let site: App;
  let developer: Browser;
  let walker: Browser;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Site Coach', websiteUrl: 'https://site-coach.example/home', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false,
    });
    site = registered.app;
    developer = await signedIn(t, f.developer);
    walker = await signedIn(t, f.user);
    await grantThroughConsent(t, walker, site, registered.clientSecret!, REDIRECT_URI);
  });
  after(() => t.close());

  const page = (browser: Browser, url: string) => browser.request('GET', url, undefined, BROWSER);
  /** The links an error page offers as ways on. */
  const waysOn = (html: string) => [...(/<ul class="ways-on">([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '').matchAll(/href="([^"]*)"[^>]*>([^<]*)</g)].map((m) => `${m[2]} → ${m[1]!.replace(/&amp;/g, '&')}`);
  const hasSignedInHeader = (html: string, name: string) => html.includes('action="/logout"') && html.includes(`(${name})`);

  it('keeps the signed-in header on a page not found and on a refused form, with a way on', async () => {
    const missing = await page(walker, '/nope');
    assert.equal(missing.status, 404);
    assert.ok(hasSignedInHeader(missing.body, 'Walker'), 'the header names the person and signs out');
    assert.deepEqual(waysOn(missing.body), ['Go to your account → /account']);
    const anonymous = await page(new Browser(t.app), '/nope');
    assert.equal(hasSignedInHeader(anonymous.body, 'Walker'), false);
    assert.deepEqual(waysOn(anonymous.body), ['Sign in to Stride → /login']);

    const refused = await walker.request('POST', '/account/profile', { display_name: 'No token' }, BROWSER);
    assert.equal(refused.status, 403);
    assert.ok(hasSignedInHeader(refused.body, 'Walker'));
    assert.deepEqual(waysOn(refused.body), ['Go to your account → /account']);
    const notTheirs = await page(walker, `/dashboard/apps/${f.app.clientId}`);
    assert.equal(notTheirs.status, 404);
    assert.ok(hasSignedInHeader(notTheirs.body, 'Walker'));
  });

  it('gives an authorization request that cannot go back to its app a way on: the settings to its developer, the website to a person who allowed it, Stride to anyone', async () => {
    const wrongRedirect = (app: App) => authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: 'https://elsewhere.example/cb', state: 's' });
    const ofDeveloper = await page(developer, wrongRedirect(site));
    assert.equal(ofDeveloper.status, 400);
    assert.ok(hasSignedInHeader(ofDeveloper.body, 'Ada Developer'));
    assert.deepEqual(waysOn(ofDeveloper.body), [`See the settings of Site Coach on your dashboard → /dashboard/apps/${site.clientId}`, 'Go to your account → /account']);
    const ofWalker = await page(walker, wrongRedirect(site));
    assert.deepEqual(waysOn(ofWalker.body), ['Back to Site Coach (site-coach.example) → https://site-coach.example/home', 'Go to your account → /account']);
    // Not allowed before: no link to the app's site, which a stranger's request could name.
    const stranger = await signedIn(t, await newAccount(t, 'Stranger'));
    assert.deepEqual(waysOn((await page(stranger, wrongRedirect(site))).body), ['Go to your account → /account']);
    assert.deepEqual(waysOn((await page(new Browser(t.app), wrongRedirect(site))).body), ['Sign in to Stride → /login']);
    const unknown = await page(walker, authorizeUrl({ response_type: 'code', client_id: 'nope', redirect_uri: REDIRECT_URI }));
    assert.equal(unknown.status, 400);
    assert.deepEqual(waysOn(unknown.body), ['Go to your account → /account']);
  });

  it('offers Stride beside the way back to an app that was not vetted', async () => {
    const stranger = await signedIn(t, await newAccount(t, 'Newcomer'));
    const refused = await page(stranger, authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'no_such_scope', state: 's' }));
    assert.equal(refused.status, 400);
    const ways = waysOn(refused.body);
    assert.equal(ways.length, 2);
    assert.match(ways[0]!, /^Return to Pace Coach \(client\.example\) with this error → https:\/\/client\.example\/callback\?error=invalid_scope/);
    assert.equal(ways[1], 'Go to your account → /account');
  });
});
