/** Shared steps of the page tests: signed-in browsers, accounts, and grants made through consent. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/domain/users.js';
import type { App } from '../../src/store/apps.js';
import type { User } from '../../src/store/users.js';
import type { TestApp } from '../support/app.js';
import { authorizeAndAllow, authorizeUrl, Browser, formFields, signIn, tokenRequest, type Response, type Tokens } from '../oauth/flow.js';

export const PASSWORD = 'correct horse battery';

export async function newAccount(t: TestApp, displayName = 'Walker'): Promise<User> {
  return createAccount(t.database.stores.users, t.clock, {
    email: `${displayName.toLowerCase().replace(/\W/g, '')}-${randomBytes(4).toString('hex')}@example.com`,
    password: PASSWORD,
    displayName,
  });
}

export async function signedIn(t: TestApp, user: User): Promise<Browser> {
  const browser = new Browser(t.app);
  const response = await signIn(browser, user.email, PASSWORD);
  assert.equal(response.status, 303);
  return browser;
}

/**
 * GETs the page of a form at `path`, following the redirect that gives a form page its id
 * (src/web/form-ids.ts) as a browser does; the answer's `url` is where it landed.
 */
export async function formPage(browser: Browser, path: string): Promise<Response & { url: string }> {
  const first = await browser.get(path);
  if (first.status !== 302 || first.location().pathname !== path.split('?')[0]) return Object.assign(first, { url: path });
  const url = first.location().pathname + first.location().search;
  return Object.assign(await browser.get(url), { url });
}

/** GETs `page` and posts its form to `action` with `fields` (hidden fields, CSRF included, come from the page). */
export async function submit(browser: Browser, page: string, action: string, fields: Record<string, string | string[]>): Promise<Response> {
  const shown = await formPage(browser, page);
  assert.equal(shown.status, 200, shown.body.slice(0, 300));
  return browser.post(action, { ...formFields(shown.body, action), ...fields });
}

/** The user (signed in as `browser`) allows `app` through the consent page, minus `untick`; returns tokens. */
export async function grantThroughConsent(
  t: TestApp,
  browser: Browser,
  app: App,
  secret: string,
  redirectUri: string,
  untick: string[] = [],
): Promise<Tokens> {
  const back = await authorizeAndAllow(
    browser,
    authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri, state: 's', prompt: 'consent' }),
    { untick },
  );
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back}`);
  const response = await tokenRequest(t, {
    grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: app.clientId, client_secret: secret,
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as Tokens;
}

export async function profileStatus(t: TestApp, token: string): Promise<number> {
  const response = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { authorization: `Bearer ${token}` } });
  return response.statusCode;
}

/** The text of the element with `id` (up to its closing tag, no same-tag nesting), tags stripped and entities decoded. */
export function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`<([a-z0-9]+)[^>]*\\sid="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return match?.[2]
    ?.replace(/<[^>]+>/g, '')
    .replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
