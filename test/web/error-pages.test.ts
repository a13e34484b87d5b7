/**
 * Errors as a browser sees them: a styled page with the same status and headers wherever the error
 * happened; programs keep the JSON error shape, and the API and the client endpoints always answer
 * JSON. No page makes the browser ask for a favicon that is not there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOAuthTestApp, encodeForm, formFields } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { cheapPasswordHashing } from '../support/passwords.js';

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
    assert.match(limited.body, new RegExp(`wait ${limited.headers['retry-after']} seconds`));
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
