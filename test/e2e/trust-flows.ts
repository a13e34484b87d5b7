/**
 * What a new user tries at the edges, in a real browser: a wrong address, a reload of the page
 * showing a secret, Back and Register again, a session that ends while a form is being filled in,
 * signing out. No page shows JSON or makes the browser fetch something missing, and no reload or
 * Back loses or duplicates anything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { assertFitsTheScreen, type BrowserFlows, registerAppInDashboard, keepScreenshot, signIn, signInAsNew, startStride, type Stride, ThirdPartyApp, uniqueEmail } from './support.js';

export function trustFlows(flows: BrowserFlows): void {
  describe('at the edges, in a real browser', () => {
    let browser: Browser;
    let stride: Stride;
    let context: BrowserContext;
    let page: Page;
    let email: string;
    /** Responses of 400 and above the browser saw, as "status url". */
    const failures: string[] = [];
    /** A server with a sign-in limit, started with the flow's first steps rather than waited for in its test. */
    let limitedStarting: Promise<Stride> | undefined;

    /** Whether `secret` authenticates `clientId` (introspection answers 200 to a client it knows). */
    const secretWorks = async (clientId: string, secret: string) => {
      const response = await fetch(`${stride.url}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: 'sat_none', client_id: clientId, client_secret: secret }),
      });
      return response.status === 200;
    };

    before(async () => {
      ({ browser, stride } = flows);
      limitedStarting = startStride(flows.dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '2/min' });
      // Awaited by its test; a failure to start is that test's.
      limitedStarting.catch(() => undefined);
      context = await browser.newContext();
      page = await context.newPage();
      page.on('response', (response) => {
        if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
      });
      email = uniqueEmail('edge');
      await page.goto(`${stride.url}/login?return_to=%2Fdashboard`);
      await signInAsNew(page, stride, 'Edge', email);
      await page.getByRole('heading', { name: 'Your apps' }).waitFor();
    });
    after(async () => {
      await context.close();
      await (await limitedStarting?.catch(() => undefined))?.close();
    });

    const sessionCookie = async () => (await context.cookies()).find((cookie) => cookie.name.includes('session'))!;

    /** The session ends in another tab (signed out): the browser no longer has its cookie. */
    const endSession = async () => {
      await context.clearCookies({ name: (await sessionCookie()).name });
    };

    /** The session reaches its end on the server; the browser still has its cookie, which outlives it. */
    const sessionExpires = async () => {
      await stride.expireSession((await sessionCookie()).value);
    };

    it('answers a wrong address with a page, and fetches nothing that is missing', async () => {
      failures.length = 0;
      for (const path of ['/nope', '/assets/missing.css']) {
        const response = await page.goto(`${stride.url}${path}`);
        assert.equal(response?.status(), 404);
        await page.getByRole('heading', { name: 'Page not found' }).waitFor();
        assert.match(String(await response?.headerValue('content-type')), /text\/html/);
      }
      await keepScreenshot(flows, page, 'not-found');
      await page.goto(`${stride.url}/dashboard`);
      await page.waitForLoadState('networkidle');
      assert.deepEqual(failures.filter((failure) => !/\/nope$|\/missing\.css$/.test(failure)), [], 'no favicon or asset is missing');
    });

    it('shows a new secret once: a reload neither shows it again nor rotates it', async () => {
      const registered = await registerAppInDashboard(page, stride, { name: 'Reload Safe', redirectUri: 'https://reload.example/cb', scopes: ['read_profile'] });
      await page.goBack();
      await page.reload();
      await page.getByText('shown once already').waitFor();
      assert.equal(await page.locator('#client-secret').count(), 0);
      assert.ok(await secretWorks(registered.clientId, registered.clientSecret));

      await page.goto(registered.detailUrl);
      // The app's usage: the chart (an image with its own title) and the table of the same numbers.
      await page.getByRole('img', { name: 'Requests per day' }).waitFor();
      await page.getByRole('table', { name: /Requests per day \(UTC\)/ }).waitFor();
      await keepScreenshot(flows, page.getByRole('heading', { name: 'Usage, last 30 days' }), 'app-usage-heading');
      await page.setViewportSize({ width: 390, height: 844 });
      await assertFitsTheScreen(page);
      await keepScreenshot(flows, page, 'app-detail-mobile');
      await page.setViewportSize({ width: 1280, height: 720 });
      await page.getByRole('button', { name: 'Rotate the client secret' }).click();
      await page.getByText('shown only this once').waitFor();
      const rotated = (await page.locator('#client-secret').textContent())!.trim();
      await page.reload();
      await page.getByText('shown once already').waitFor();
      assert.equal(await page.locator('#client-secret').count(), 0);
      await keepScreenshot(flows, page, 'rotated-secret-reloaded');
      assert.ok(await secretWorks(registered.clientId, rotated), 'the secret copied before the reload still works');
      assert.equal(await secretWorks(registered.clientId, registered.clientSecret), false);
    });

    it('registers one app when the form is sent again after Back', async () => {
      await registerAppInDashboard(page, stride, { name: 'Back Twice', redirectUri: 'https://back.example/cb', scopes: ['read_profile'] });
      await page.goBack(); // the credentials page
      await page.goBack(); // the filled-in form
      await page.getByLabel('App name').fill('Back Twice');
      await page.getByLabel('Redirect URIs').fill('https://back.example/cb');
      await page.locator('#scope-read_profile').setChecked(true);
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.getByText('no second app was made').waitFor();
      await page.goto(`${stride.url}/dashboard`);
      assert.equal(await page.getByRole('link', { name: 'Back Twice' }).count(), 1);
    });

    it('keeps what was typed when the session ends before the form is sent', async () => {
      await page.goto(`${stride.url}/dashboard/apps/new`);
      await page.getByLabel('App name').fill('Typed Then Expired');
      await page.getByLabel('Redirect URIs').fill('https://expired.example/cb');
      await sessionExpires();
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
      await page.getByText('what you typed').waitFor();
      await keepScreenshot(flows, page, 'session-ended-sign-in');
      await signIn(page, email);
      await page.getByText('What you typed is back').waitFor();
      assert.equal(await page.getByLabel('App name').inputValue(), 'Typed Then Expired');
      assert.equal(await page.getByLabel('Redirect URIs').inputValue(), 'https://expired.example/cb');
      await keepScreenshot(flows, page, 'session-ended-form-kept');
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.getByRole('heading', { name: 'Typed Then Expired is registered' }).waitFor();
    });

    it('asks to sign in again when the session ends on the consent page, then shows the request again', async () => {
      const client = new ThirdPartyApp(stride);
      await client.start();
      try {
        const registered = await registerAppInDashboard(page, stride, { name: 'Consent Later', redirectUri: client.redirectUri, scopes: ['read_profile'] });
        Object.assign(client, { clientId: registered.clientId, clientSecret: registered.clientSecret });
        await page.goto(client.authorizeUrl('state-ended'));
        await page.getByRole('heading', { name: 'Consent Later wants to access your Stride account' }).waitFor();
        await endSession();
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByRole('heading', { name: 'Signed out' }).waitFor();
        assert.match((await page.locator('main').textContent())!, /nothing was shared/);
        await keepScreenshot(flows, page, 'consent-signed-out');
        await page.getByRole('link', { name: 'Sign in again' }).click();
        await signIn(page, email);
        await page.getByRole('heading', { name: 'Consent Later wants to access your Stride account' }).waitFor();
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.locator('#result').filter({ hasText: 'connected' }).waitFor();
        assert.equal(client.lastCallback.state, 'state-ended');
        assert.equal(client.tokens().scope, 'read_profile');
      } finally {
        await client.stop();
      }
    });

    it("fits a phone: no page wider than the screen, the demo callback's commands one line each", async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const phonePage = await phone.newPage();
        for (const path of ['/login', '/signup', '/nope', `/demo/callback?code=sac_${'x'.repeat(64)}&state=${'s'.repeat(64)}`]) {
          await phonePage.goto(`${stride.url}${path}`);
          await assertFitsTheScreen(phonePage);
        }
        await phonePage.getByText('First put the').waitFor();
        for (const command of await phonePage.locator('pre.command').all()) {
          // A line wrapped by the browser shows as more than one line box of the text.
          const { lines, boxes } = await command.evaluate((pre) => {
            const range = document.createRange();
            range.selectNodeContents(pre);
            const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
            return { lines: pre.textContent!.split('\n').length, boxes: tops.size };
          });
          assert.equal(boxes, lines, 'no line of the command is wrapped');
        }
        await keepScreenshot(flows, phonePage, 'demo-callback-mobile');
      } finally {
        await phone.close();
      }
    });

    it("shows the demo callback's exchange command whole on a computer's screen, for a real code and client id", async () => {
      const registered = await registerAppInDashboard(page, stride, { name: 'Demo Like', redirectUri: `${stride.url}/demo/callback`, scopes: ['read_profile'] });
      const authorize = new URL(`${stride.url}/oauth2/authorize`);
      authorize.search = new URLSearchParams({ response_type: 'code', client_id: registered.clientId, redirect_uri: `${stride.url}/demo/callback`, state: 's'.repeat(32) }).toString();
      await page.setViewportSize({ width: 1280, height: 720 });
      await page.goto(authorize.toString());
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Demo app: back from Stride' }).waitFor();
      const exchange = page.locator('#exchange');
      assert.match((await exchange.textContent())!, new RegExp(`client_id='${registered.clientId}'`));
      for (const command of await page.locator('pre.command').all()) {
        const { scrollWidth, clientWidth } = await command.evaluate((pre) => ({ scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth }));
        assert.ok(scrollWidth <= clientWidth, `a command is cut: ${scrollWidth} px in ${clientWidth} px`);
      }
      await keepScreenshot(flows, page, 'demo-callback');
    });

    it('shows the sign-in rate limit as a page with a way back', async () => {
      const limited = await limitedStarting!;
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        let response;
        for (let attempt = 0; attempt < 3; attempt++) {
          await page.goto(`${limited.url}/login`);
          await page.getByLabel('Email').fill('nobody@example.com');
          await page.getByLabel('Password').fill('not the password');
          [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()]);
        }
        assert.equal(response!.status(), 429);
        await page.getByRole('heading', { name: 'Too many attempts' }).waitFor();
        assert.match(String(await response!.headerValue('content-type')), /text\/html/);
        await keepScreenshot(flows, page, 'sign-in-rate-limited');
        await page.getByRole('link', { name: 'Back to the form' }).click();
        await page.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
      } finally {
        await context.close();
      }
    });

    it('says so when signed out', async () => {
      await page.goto(`${stride.url}/dashboard`);
      await page.getByRole('button', { name: /Sign out/ }).click();
      await page.getByText('You are signed out').waitFor();
      await keepScreenshot(flows, page, 'signed-out');
    });
  });
}
