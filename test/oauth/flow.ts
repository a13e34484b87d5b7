/**
 * Shared steps of the authorization-server tests: a Stride app with a test-only protected route,
 * a cookie-keeping "browser" over app.inject() or a real socket, and the steps of the code flow.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { bearerAuth, requireScope } from '../../src/api/bearer.js';
import type { Dialect } from '../../src/db/database.js';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import type { App } from '../../src/store/apps.js';
import type { User } from '../../src/store/users.js';
import { createTestApp, type TestApp } from '../support/app.js';

export const PROTECTED_PATH = '/test/protected';

/**
 * Like createTestApp, plus a test-only resource route behind the real bearer check
 * (GET needs read_profile, POST needs write_activity), so tokens can be used over HTTP.
 */
export function createOAuthTestApp(dialect: Dialect, env: Record<string, string> = {}): Promise<TestApp> {
  return createTestApp(dialect, env, async (app) => {
    await app.register(async (scope) => {
      await bearerAuth(scope);
      scope.get(PROTECTED_PATH, { preHandler: requireScope('read_profile') }, async (request) => ({ user_id: request.auth.userId, scopes: request.auth.scopes }));
      scope.post(PROTECTED_PATH, { preHandler: requireScope('write_activity') }, async () => ({ ok: true }));
    });
  });
}

export interface Fixture {
  developer: User;
  user: User;
  password: string;
  /** A confidential app with every scope and two redirect URIs. */
  app: App;
  secret: string;
  /** A public app (PKCE required). */
  publicApp: App;
}

export const REDIRECT_URI = 'https://client.example/callback';
export const OTHER_REDIRECT_URI = 'https://client.example/other?x=1';

export async function createFixture(t: TestApp): Promise<Fixture> {
  const password = 'correct horse battery';
  const developer = await createAccount(t.database.stores.users, t.clock, { email: `dev-${randomBytes(4).toString('hex')}@example.com`, password, displayName: 'Ada Developer' });
  const user = await createAccount(t.database.stores.users, t.clock, { email: `walker-${randomBytes(4).toString('hex')}@example.com`, password, displayName: 'Walker' });
  const registered = await registerApp(t.database.stores.apps, t.clock, developer.id, {
    name: 'Pace Coach',
    redirectUris: [REDIRECT_URI, OTHER_REDIRECT_URI],
    scopes: ['read_profile', 'read_activity', 'write_activity'],
    isPublic: false,
  });
  const publicApp = await registerApp(t.database.stores.apps, t.clock, developer.id, {
    name: 'Pocket Walker',
    redirectUris: ['com.example.walker:/cb', 'http://127.0.0.1:9/cb'],
    scopes: ['read_profile', 'read_activity'],
    isPublic: true,
  });
  return { developer, user, password, app: registered.app, secret: registered.clientSecret!, publicApp: publicApp.app };
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
  location(): URL;
}

function header(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** A browser's cookie jar over app.inject() (or fetch against `baseUrl`). */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly setCookieHeaders: string[] = [];

  constructor(private readonly app: FastifyInstance | null, private readonly baseUrl = 'http://stride.test') {}

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Response> {
    const body = form === undefined ? undefined : encodeForm(form);
    const allHeaders: Record<string, string> = { ...headers };
    if (this.cookies.size > 0) allHeaders.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) allHeaders['content-type'] = 'application/x-www-form-urlencoded';
    let response: Response;
    if (this.app) {
      const r = await this.app.inject({ method, url, headers: allHeaders, ...(body !== undefined && { payload: body }) });
      response = wrap(r.statusCode, r.headers as Response['headers'], r.body, this.baseUrl);
    } else {
      const r = await fetch(new URL(url, this.baseUrl), { method, headers: allHeaders, redirect: 'manual', ...(body !== undefined && { body }) });
      const h: Response['headers'] = {};
      r.headers.forEach((value, name) => {
        h[name] = value;
      });
      h['set-cookie'] = r.headers.getSetCookie();
      response = wrap(r.status, h, await r.text(), this.baseUrl);
    }
    for (const line of header(response.headers['set-cookie'])) {
      this.setCookieHeaders.push(line);
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  get(url: string) {
    return this.request('GET', url);
  }

  post(url: string, form: Record<string, string | string[]>, headers?: Record<string, string>) {
    return this.request('POST', url, form, headers);
  }
}

function wrap(status: number, headers: Response['headers'], body: string, baseUrl: string): Response {
  return {
    status,
    headers,
    body,
    json: () => JSON.parse(body),
    location: () => {
      const value = headers.location;
      assert.ok(typeof value === 'string', `expected a redirect, got ${status}: ${body.slice(0, 300)}`);
      return new URL(value, baseUrl);
    },
  };
}

export function encodeForm(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

function unescapeHtml(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The hidden inputs of the (first) form of a page, by name. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescapeHtml(match[1]!)] = unescapeHtml(match[2]!);
  return fields;
}

/** The CSRF token of the form posting to `action` (the sign-out form also carries one). */
export function formFields(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  assert.ok(start >= 0, `no form posting to ${action} in: ${html.slice(0, 500)}`);
  const end = html.indexOf('</form>', start);
  return hiddenFields(html.slice(start, end));
}

export function checkboxScopes(html: string): string[] {
  return [...html.matchAll(/name="granted_scope" value="([^"]+)" checked/g)].map((m) => m[1]!);
}

export async function signIn(browser: Browser, email: string, password: string, returnTo?: string): Promise<Response> {
  const page = await browser.get(returnTo ? `/login?return_to=${encodeURIComponent(returnTo)}` : '/login');
  assert.equal(page.status, 200);
  const fields = formFields(page.body, '/login');
  return browser.post('/login', { ...fields, email, password });
}

export function authorizeUrl(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
  return `/oauth2/authorize?${query}`;
}

export interface PkcePair {
  verifier: string;
  challenge: string;
}

export function pkce(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Allows the consent page shown for `url` (optionally unticking scopes) and returns the redirect
 * back to the app. When consent is remembered, returns the immediate redirect.
 */
export async function authorizeAndAllow(browser: Browser, url: string, options: { untick?: string[]; decision?: string } = {}): Promise<URL> {
  const page = await browser.get(url);
  if (page.status === 302) return page.location();
  assert.equal(page.status, 200, page.body.slice(0, 500));
  const fields = formFields(page.body, '/oauth2/authorize');
  const ticked = checkboxScopes(page.body).filter((s) => !options.untick?.includes(s));
  const decision = await browser.post('/oauth2/authorize', { ...fields, granted_scope: ticked, decision: options.decision ?? 'allow' });
  assert.equal(decision.status, 303, decision.body.slice(0, 500));
  return decision.location();
}

/** Signs in `fixture.user`, authorizes the confidential app and returns the code. */
export async function obtainCode(
  t: TestApp,
  fixture: Fixture,
  extra: Record<string, string | undefined> = {},
  browser = new Browser(t.app),
): Promise<{ code: string; browser: Browser; redirect: URL }> {
  if (!browser.cookies.has('stride_session')) {
    const login = await signIn(browser, fixture.user.email, fixture.password);
    assert.equal(login.status, 303);
  }
  const redirect = await authorizeAndAllow(
    browser,
    authorizeUrl({ response_type: 'code', client_id: fixture.app.clientId, redirect_uri: REDIRECT_URI, state: 'st-1', ...extra }),
  );
  const code = redirect.searchParams.get('code');
  assert.ok(code, `no code in ${redirect}`);
  return { code, browser, redirect };
}

export function tokenRequest(t: TestApp, form: Record<string, string>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: encodeForm(form),
  });
}

export async function exchangeCode(t: TestApp, fixture: Fixture, code: string, extra: Record<string, string> = {}) {
  return tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: fixture.app.clientId,
    client_secret: fixture.secret,
    ...extra,
  });
}

export async function refresh(t: TestApp, fixture: Fixture, refreshToken: string, extra: Record<string, string> = {}) {
  return tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: fixture.app.clientId,
    client_secret: fixture.secret,
    ...extra,
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

/** The whole flow for `fixture.user` and the confidential app; returns the token response. */
export async function obtainTokens(t: TestApp, fixture: Fixture, extra: Record<string, string | undefined> = {}): Promise<Tokens> {
  const { code } = await obtainCode(t, fixture, extra);
  const response = await exchangeCode(t, fixture, code);
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as Tokens;
}

/** Status of a call to the test-only protected route with `token`. */
export async function useToken(t: TestApp, token: string): Promise<number> {
  const response = await t.app.inject({ method: 'GET', url: PROTECTED_PATH, headers: { authorization: `Bearer ${token}` } });
  return response.statusCode;
}
