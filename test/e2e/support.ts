/**
 * Shared pieces of the real-browser flows: a `stride serve` process on a fresh SQLite file, a
 * small third-party app (its own callback server on 127.0.0.1 that exchanges codes with fetch),
 * and the page steps a person takes (sign up, register an app).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Browser, Locator, Page } from 'playwright-core';
import { openDatabase, type Dialect } from '../../src/db/database.js';
import { minutesOfReadings } from '../../src/domain/heart-rate-readings.js';
import { writePersonData } from '../../src/domain/person-data.js';
import { LIVES, synthesizePerson, type LifeName } from '../../src/domain/synthetic-person.js';
import { createAccount } from '../../src/domain/users.js';
import { createStores } from '../../src/store/stores.js';
import { hashCredential } from '../../src/security/secrets.js';
import { screenshotPath } from '../support/browser.js';
import { freePort, startServer } from '../support/cli.js';
import { createTestDatabase } from '../support/databases.js';

export const PASSWORD = 'correct horse battery';

export interface Stride {
  url: string;
  /** Ends the session whose cookie holds `cookieValue` as reaching its SESSION_TTL would: the browser keeps the cookie. */
  expireSession(cookieValue: string): Promise<void>;
  /**
   * Makes an account with PASSWORD as `stride users create` would, for a flow whose subject is not
   * sign-up (signUp goes through the pages). Its Argon2id hash is this process's cheap one
   * (browser-flows.ts), which the server verifies as any other: its parameters are in the hash.
   */
  createAccount(displayName: string, email: string): Promise<void>;
  /**
   * Writes `days` days of the made-up `life` (ending now) for the account `email`, and sets its
   * zone to the life's, as `stride demo` writes a person's data.
   */
  writeLife(email: string, life: LifeName, days: number): Promise<void>;
  /** Moves the last sync of the test person with `email` back `seconds`, as that much time passing would. */
  backdateSync(email: string, seconds: number): Promise<void>;
  close(): Promise<void>;
}

/** A `stride serve` on a database of its own: a fresh SQLite file, or a fresh PostgreSQL schema. */
export async function startStride(dialect: Dialect, env: Record<string, string> = {}): Promise<Stride> {
  const database = await createTestDatabase(dialect, { migrate: false });
  // The server migrates and opens the database itself, as an operator's would.
  await database.db.close();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = await startServer(port, {
    DATABASE_URL: database.url,
    PUBLIC_URL: url,
    RATE_LIMIT: 'off',
    ...env,
  });
  return {
    url,
    expireSession: async (cookieValue) => {
      const db = openDatabase(database.url);
      try {
        await db.kysely.updateTable('sessions').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).where('id_hash', '=', hashCredential(cookieValue)).execute();
      } finally {
        await db.close();
      }
    },
    createAccount: async (displayName, email) => {
      const db = openDatabase(database.url);
      try {
        await createAccount(createStores(db).users, () => Math.floor(Date.now() / 1000), { email, password: PASSWORD, displayName });
      } finally {
        await db.close();
      }
    },
    writeLife: async (email, life, days) => {
      const db = openDatabase(database.url);
      try {
        const stores = createStores(db);
        const user = (await stores.users.findByEmail(email))!;
        const now = Math.floor(Date.now() / 1000);
        const person = synthesizePerson(LIVES[life], now, days, 7);
        await stores.users.updateProfile(user.id, { timezone: LIVES[life].timezone }, now);
        const records = { steps: person.steps, calories: person.calories, heartrate: minutesOfReadings(person.heartrate), sleep: person.sleep, weight: person.weight };
        await writePersonData(stores, { id: user.id, timezone: LIVES[life].timezone }, records, now, 0);
      } finally {
        await db.close();
      }
    },
    backdateSync: async (email, seconds) => {
      const db = openDatabase(database.url);
      try {
        const person = await db.kysely.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
        const row = await db.kysely.selectFrom('test_people').select('synced_until').where('user_id', '=', person.id).executeTakeFirstOrThrow();
        await db.kysely.updateTable('test_people').set({ synced_until: Number(row.synced_until) - seconds }).where('user_id', '=', person.id).execute();
      } finally {
        await db.close();
      }
    },
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await database.drop();
    },
  };
}

/**
 * The Chromium and the `stride serve` that the flows of one database share (browser-flows.ts
 * starts them once): each flow opens its own browser contexts, makes its own people and
 * registers its own app.
 */
export interface BrowserFlows {
  browser: Browser;
  stride: Stride;
  dialect: Dialect;
}

/**
 * Screenshots for people to look at (test-artifacts/<database>/), taken when TEST_SCREENSHOTS is
 * set: no assertion reads them, and a whole page's picture costs a browser a fraction of a second
 * each, some 25 times a run.
 */
export const SCREENSHOTS = process.env.TEST_SCREENSHOTS !== undefined && process.env.TEST_SCREENSHOTS !== '';

/** Keeps a picture of the whole page (or of `part` of it) as `name`, when screenshots are asked for. */
export async function keepScreenshot(flows: BrowserFlows, page: Page | Locator, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  const path = screenshotPath(`${flows.dialect}/${name}`);
  await ('goto' in page ? page.screenshot({ path, fullPage: true }) : page.screenshot({ path }));
}

/** Fails when the page is wider than the browser's window: a phone would have to scroll sideways. */
export async function assertFitsTheScreen(page: Page): Promise<void> {
  const { width, screen } = await page.evaluate(() => ({ width: document.documentElement.scrollWidth, screen: window.innerWidth }));
  assert.ok(width <= screen, `${page.url()} is ${width} px wide on a ${screen} px screen`);
}

export function uniqueEmail(name: string): string {
  return `${name}-${randomBytes(4).toString('hex')}@example.com`;
}

/**
 * Signs up through the sign-up page (from wherever the page is: the sign-in page links to it),
 * then signs in on the page sign-up leads to: sign-up answers alike whether or not the email was
 * taken (docs/web.md), so it never signs anyone in by itself.
 */
export async function signUp(page: Page, name: string, email: string): Promise<void> {
  if (!page.url().includes('/signup')) await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
  await signIn(page, email);
}

/**
 * A new person, made directly (Stride.createAccount), signed in on the sign-in page the browser is
 * on — for the flows whose subject is not sign-up, which others go through page by page.
 */
export async function signInAsNew(page: Page, stride: Stride, name: string, email: string): Promise<void> {
  await stride.createAccount(name, email);
  await page.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
  await signIn(page, email);
}

export async function signIn(page: Page, email: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export interface RegisteredInBrowser {
  clientId: string;
  clientSecret: string;
  detailUrl: string;
}

/** Registers an app in the dashboard and reads its credentials off the page. */
export async function registerAppInDashboard(
  page: Page,
  stride: Stride,
  settings: { name: string; redirectUri: string; scopes: string[]; description?: string; isPublic?: boolean },
): Promise<RegisteredInBrowser> {
  await page.goto(`${stride.url}/dashboard`);
  await page.getByRole('link', { name: 'Register a new app' }).click();
  await page.getByLabel('App name').fill(settings.name);
  if (settings.description) await page.getByLabel(/^Description/).fill(settings.description);
  await page.getByLabel(/^Website/).fill('https://example.com');
  await page.getByLabel('Redirect URIs').fill(settings.redirectUri);
  for (const scope of ['read_profile', 'write_profile', 'read_activity', 'write_activity']) {
    await page.locator(`#scope-${scope}`).setChecked(settings.scopes.includes(scope));
  }
  if (settings.isPublic) await page.getByRole('radio', { name: /Public/ }).check();
  await page.getByRole('button', { name: 'Register app' }).click();
  await page.getByRole('heading', { name: `${settings.name} is registered` }).waitFor();
  const clientId = (await page.locator('#client-id').textContent())!.trim();
  // A public app has no secret to show.
  const clientSecret = settings.isPublic ? '' : (await page.locator('#client-secret').textContent())!.trim();
  await page.getByRole('link', { name: "Continue to the app's settings" }).click();
  return { clientId, clientSecret, detailUrl: page.url() };
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  scope: string;
}

/**
 * A third-party app: it sends users to Stride's authorize URL, receives them at its own callback
 * on 127.0.0.1, exchanges the code with fetch, and calls the API with the tokens.
 */
export class ThirdPartyApp {
  clientId = '';
  clientSecret = '';
  /** What the callback received last: tokens, or the error Stride sent. */
  lastCallback: { tokens?: TokenSet; error?: string; state?: string; exchangeStatus?: number } = {};
  private server!: Server;
  redirectUri = '';

  constructor(private readonly stride: Stride) {}

  async start(): Promise<void> {
    const port = await freePort();
    this.redirectUri = `http://127.0.0.1:${port}/callback`;
    this.server = createServer((request, response) => {
      // Only the callback: the browser also asks for /favicon.ico.
      if (!request.url?.startsWith('/callback')) {
        response.writeHead(404).end();
        return;
      }
      void this.handle(request.url ?? '/').then((html) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      }, (error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  authorizeUrl(state: string, scope?: string, prompt?: string): string {
    const url = new URL(`${this.stride.url}/oauth2/authorize`);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.clientId);
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('state', state);
    if (scope) url.searchParams.set('scope', scope);
    if (prompt) url.searchParams.set('prompt', prompt);
    return url.toString();
  }

  private async handle(path: string): Promise<string> {
    const query = new URL(path, 'http://127.0.0.1').searchParams;
    const state = query.get('state') ?? undefined;
    const error = query.get('error');
    if (error) {
      this.lastCallback = { error, ...(state !== undefined && { state }) };
      return `<h1>Not connected</h1><p id="result">${error}</p>`;
    }
    const response = await this.tokenRequest({
      grant_type: 'authorization_code',
      code: query.get('code') ?? '',
      redirect_uri: this.redirectUri,
    });
    const body = (await response.json()) as TokenSet & { error?: string };
    this.lastCallback = { exchangeStatus: response.status, ...(state !== undefined && { state }), ...(response.ok && { tokens: body }) };
    return response.ok ? '<h1>Connected</h1><p id="result">connected</p>' : `<h1>Exchange failed</h1><p id="result">${body.error}</p>`;
  }

  tokenRequest(form: Record<string, string>, secret = this.clientSecret): Promise<globalThis.Response> {
    return fetch(`${this.stride.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form, client_id: this.clientId, client_secret: secret }),
    });
  }

  refresh(refreshToken: string, secret = this.clientSecret): Promise<globalThis.Response> {
    return this.tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, secret);
  }

  api(token: string, path = '/v1/users/me', init: RequestInit = {}): Promise<globalThis.Response> {
    return fetch(`${this.stride.url}${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });
  }

  /** The tokens of the last successful callback. */
  tokens(): TokenSet {
    assert.ok(this.lastCallback.tokens, `no tokens: ${JSON.stringify(this.lastCallback)}`);
    return this.lastCallback.tokens;
  }
}
