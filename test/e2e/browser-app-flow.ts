/**
 * In a real browser: an app that runs entirely in the page, on an origin of its own, written with a
 * real OAuth library (oauth4webapi, loaded by the page as a module). It is a public client: PKCE, no
 * secret. Through CORS it discovers Stride's metadata, exchanges the code, reads and changes the
 * profile, refreshes, revokes, and reads the 401's WWW-Authenticate challenge afterwards.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { freePort } from '../support/cli.js';
import { registerAppInDashboard, keepScreenshot, signInAsNew, uniqueEmail, type BrowserFlows, type Stride } from './support.js';

/** The app's whole site: one page, its script and the library, served from 127.0.0.1. */
class SinglePageApp {
  clientId = '';
  url = '';
  private server?: Server;

  constructor(private readonly stride: Stride) {}

  get redirectUri(): string {
    return `${this.url}/callback`;
  }

  async start(): Promise<void> {
    const files: Record<string, string> = {
      '/app.js': await readFile(join(process.cwd(), 'test/e2e/spa/app.js'), 'utf8'),
      '/oauth4webapi.js': await readFile(fileURLToPath(import.meta.resolve('oauth4webapi')), 'utf8'),
    };
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.server = createServer((request, response) => {
      const path = new URL(request.url ?? '/', this.url).pathname;
      const script = files[path];
      if (script !== undefined) {
        response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
      } else if (path === '/' || path === '/callback') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.page());
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private page(): string {
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pocket Pedometer</title>
<link rel="icon" href="data:,"><script type="module" src="/app.js"></script></head>
<body data-issuer="${this.stride.url}" data-client-id="${this.clientId}">
<h1>Pocket Pedometer</h1><button id="connect">Connect Stride</button><pre id="result"></pre></body></html>`;
  }
}

export function browserAppFlow(flows: BrowserFlows): void {
  describe('an app that runs in the browser on its own origin (CORS)', () => {
    let spa: SinglePageApp;
    let developer: BrowserContext;
    let person: BrowserContext;

    before(async () => {
      spa = new SinglePageApp(flows.stride);
      await spa.start();
      developer = await flows.browser.newContext();
      person = await flows.browser.newContext();
    });
    after(async () => {
      await developer?.close();
      await person?.close();
      await spa?.stop();
    });

    it('connects with PKCE, reads and changes the profile, refreshes and revokes, all from the page', async () => {
      const devPage = await developer.newPage();
      await devPage.goto(`${flows.stride.url}/login`);
      await signInAsNew(devPage, flows.stride, 'Sam Developer', uniqueEmail('sam'));
      const registered = await registerAppInDashboard(devPage, flows.stride, {
        name: 'Pocket Pedometer',
        redirectUri: spa.redirectUri,
        scopes: ['read_profile', 'write_profile'],
        isPublic: true,
      });
      spa.clientId = registered.clientId;
      assert.notEqual(new URL(spa.url).origin, new URL(flows.stride.url).origin);

      const page = await person.newPage();
      await page.goto(spa.url);
      await page.getByRole('button', { name: 'Connect Stride' }).click();
      // Stride's sign-in page (or the app's own report that discovery failed), then sign-in from
      // there, then the consent for this request.
      const result = page.locator('#result');
      const settled = () => undefined;
      await Promise.race([page.waitForURL(/\/login\?/).then(settled, settled), result.filter({ hasText: 'failed' }).waitFor().then(settled, settled)]);
      if (!/\/login\?/.test(page.url())) assert.fail(`the app did not send the person to Stride: ${await result.textContent()}`);
      await signInAsNew(page, flows.stride, 'Robin', uniqueEmail('robin'));
      await page.getByRole('heading', { name: 'Pocket Pedometer wants to access your Stride account' }).waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();

      await page.waitForURL(`${spa.url}/callback?**`);
      await result.filter({ hasText: /\S/ }).waitFor();
      const outcome = JSON.parse((await result.textContent())!) as Record<string, unknown>;
      assert.equal(outcome.failed, undefined, String(outcome.failed));
      assert.equal(outcome.scope, 'read_profile write_profile');
      assert.equal(outcome.renamedTo, 'Robin (from the browser)');
      assert.equal(outcome.refreshedProfileId, outcome.profileId);
      assert.deepEqual(outcome.afterRevocation, { status: 401, challenge: 'invalid_token' });
      await page.getByRole('heading', { name: 'Connected as Robin (from the browser)' }).waitFor();
      await keepScreenshot(flows, page, 'browser-app-connected');

      // The change the page made is Robin's: the account page shows the new name.
      await page.goto(`${flows.stride.url}/account`);
      assert.equal(await page.getByLabel('Display name').inputValue(), 'Robin (from the browser)');
    });
  });
}
