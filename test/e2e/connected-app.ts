/**
 * In a real browser: a developer signs up, registers an app in the dashboard and copies its
 * credentials; a third-party app sends a second person through authorize → sign-up → consent,
 * exchanges the code and calls the API; the person revokes the app on the account page, and the
 * app's next call gets 401 and its refresh fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { assertFitsTheScreen, type BrowserFlows, keepScreenshot, signUp, type Stride, ThirdPartyApp, uniqueEmail } from './support.js';

export function connectedAppFlow(flows: BrowserFlows): void {
  describe('a person connects an app and revokes it, in a real browser', () => {
    let stride: Stride;
    let client: ThirdPartyApp;
    let developer: BrowserContext;
    let walker: BrowserContext;
    let devPage: Page;
    let walkerPage: Page;

    before(async () => {
      const { browser } = flows;
      stride = flows.stride;
      client = new ThirdPartyApp(stride);
      await client.start();
      developer = await browser.newContext();
      // The copy button writes to the clipboard; the test reads it back.
      await developer.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stride.url });
      walker = await browser.newContext({ viewport: { width: 390, height: 844 } });
      devPage = await developer.newPage();
      walkerPage = await walker.newPage();
    });

    after(async () => {
      await developer?.close();
      await walker?.close();
      await client?.stop();
    });

    it('a developer signs up, registers an app and copies its credentials', async () => {
      await devPage.goto(`${stride.url}/dashboard`);
      assert.match(devPage.url(), /\/login\?return_to=%2Fdashboard$/);
      await signUp(devPage, 'Ada Developer', uniqueEmail('ada'));
      assert.equal(new URL(devPage.url()).pathname, '/dashboard');

      await devPage.getByRole('link', { name: 'Register a new app' }).click();
      await devPage.getByLabel('App name').fill('Pace Coach');
      await devPage.getByLabel(/^Description/).fill('Coaching for your daily walks');
      await devPage.getByLabel('Redirect URIs').fill(client.redirectUri);
      await devPage.locator('#scope-read_activity').check();
      await devPage.getByRole('button', { name: 'Register app' }).click();
      await devPage.getByRole('heading', { name: 'Pace Coach is registered' }).waitFor();

      // Copy both credentials with the copy buttons, as a developer would.
      const copyId = devPage.getByRole('button', { name: 'Copy client id' });
      await copyId.click();
      client.clientId = await devPage.evaluate(() => navigator.clipboard.readText());
      await devPage.getByRole('button', { name: 'Copy client secret' }).click();
      client.clientSecret = await devPage.evaluate(() => navigator.clipboard.readText());
      await devPage.getByRole('status').filter({ hasText: 'client secret is copied' }).waitFor();
      assert.equal(client.clientId, (await devPage.locator('#client-id').textContent())?.trim());
      assert.equal(client.clientSecret, (await devPage.locator('#client-secret').textContent())?.trim());
      assert.match(client.clientSecret, /.{32,}/);
      await keepScreenshot(flows, devPage, 'app-created');

      await devPage.goto(`${stride.url}/dashboard`);
      await devPage.getByRole('link', { name: 'Pace Coach' }).waitFor();
      await keepScreenshot(flows, devPage, 'dashboard');
    });

    it('a second person authorizes it: authorize → sign up → consent, and the app calls the API', async () => {
      await walkerPage.goto(client.authorizeUrl('state-123'));
      assert.equal(new URL(walkerPage.url()).pathname, '/login');
      // The sign-in page says which app is asking before it asks for anything.
      assert.match((await walkerPage.locator('#asking-app').textContent())!, /^Pace Coach, made by Ada Developer, asks to connect to your Stride account/);
      await signUp(walkerPage, 'Walker', uniqueEmail('walker'));

      // Back at the request: the consent page.
      await walkerPage.getByRole('heading', { name: 'Pace Coach wants to access your Stride account' }).waitFor();
      const host = new URL(client.redirectUri).host;
      assert.match((await walkerPage.locator('#redirect-host').textContent())!, new RegExp(`go back to ${host.replace(/\./g, '\\.')}`));
      assert.match((await walkerPage.locator('main').textContent())!, /Made by Ada Developer/);
      assert.equal(await walkerPage.getByRole('checkbox', { name: /See your profile/ }).isChecked(), true);
      assert.equal(await walkerPage.getByRole('checkbox', { name: 'See your steps, distance and calories' }).isChecked(), true);
      await assertFitsTheScreen(walkerPage);
      await keepScreenshot(flows, walkerPage, 'consent-mobile');
      await walkerPage.getByRole('button', { name: 'Allow' }).click();

      await walkerPage.locator('#result').filter({ hasText: 'connected' }).waitFor();
      assert.equal(client.lastCallback.state, 'state-123');
      const tokens = client.tokens();
      assert.equal(tokens.scope, 'read_profile read_activity');
      const me = await client.api(tokens.access_token);
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { display_name: string }).display_name, 'Walker');
    });

    it('the person sees the app under Connected apps and revokes it; the app gets 401 and cannot refresh', async () => {
      const card = walkerPage.locator('li.card', { has: walkerPage.getByRole('heading', { name: 'Pace Coach' }) });
      // The API records a grant's use after it answers (api/bearer.ts): on a loaded machine the
      // record may land a moment after the call above returned, so the page is read again until then.
      let text = '';
      for (let tries = 0; tries < 20 && !/Last used\s*\d/.test(text); tries++) {
        if (tries > 0) await walkerPage.waitForTimeout(250);
        await walkerPage.goto(`${stride.url}/account`);
        await card.waitFor();
        text = (await card.textContent())!;
      }
      assert.match(text, /Made by Ada Developer/);
      assert.match(text, /See your steps, distance and calories/);
      assert.match(text, /Allowed/);
      assert.match(text, /Last used\s*\d/, 'the API call above counts as use');
      await assertFitsTheScreen(walkerPage);
      await keepScreenshot(flows, walkerPage, 'account-mobile');
      await walkerPage.setViewportSize({ width: 1100, height: 900 });
      await keepScreenshot(flows, walkerPage, 'account');

      await card.getByRole('button', { name: 'Revoke access for Pace Coach' }).click();
      await walkerPage.getByRole('status').filter({ hasText: 'Pace Coach can no longer access your account' }).waitFor();
      assert.equal(await walkerPage.getByText('No app has access to your account.').count(), 1);

      const tokens = client.tokens();
      const me = await client.api(tokens.access_token);
      assert.equal(me.status, 401);
      const refreshed = await client.refresh(tokens.refresh_token);
      assert.equal(refreshed.status, 400);
      assert.equal(((await refreshed.json()) as { error: string }).error, 'invalid_grant');
    });

    it("the developer sees exactly that traffic on the app's page", async () => {
      await devPage.goto(`${stride.url}/dashboard`);
      await devPage.getByRole('link', { name: 'Pace Coach' }).click();
      const table = devPage.getByRole('table', { name: /Requests per day/ });
      // Every column is in sight on a computer's screen, none hidden behind a sideways scroll.
      const clipped = await table.evaluate((element) => element.scrollWidth - element.parentElement!.clientWidth);
      assert.ok(clipped <= 0, `the table is ${clipped} px wider than the page`);
      const columns = (await table.locator('thead th').allTextContents()).map((name) => name.trim());
      const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent!.trim())));
      assert.ok(rows.length >= 1, 'a row for today');
      // Summed over the rows, in case the flow ran across midnight UTC.
      const total = (column: string) => rows.reduce((sum, row) => sum + Number(row[columns.indexOf(column)]), 0);
      // The code exchange and the failed refresh (token), and two API reads: the one before the
      // revocation and the 401 after it, which carried a token issued to the app, so it is the app's.
      assert.deepEqual(
        Object.fromEntries(['API reads', 'API writes', 'Token', '2xx', '4xx', '429', '5xx', 'Issued', 'Refreshed'].map((column) => [column, total(column)])),
        { 'API reads': 2, 'API writes': 0, Token: 2, '2xx': 2, '4xx': 2, '429': 0, '5xx': 0, Issued: 1, Refreshed: 0 },
      );
      const connections = rows.map((row) => /^\+(\d+) \/ −(\d+)$/.exec(row[columns.indexOf('Connected')]!)!.slice(1).map(Number));
      assert.deepEqual(connections.reduce(([joined, left], [j, l]) => [joined! + j!, left! + l!], [0, 0]), [1, 1], 'one person connected and left');
      assert.match((await devPage.locator('#usage-heading + p').textContent())!.replace(/\s+/g, ' '), /^4 requests · 1 token issued · 0 refreshed · 1 person connected, 1 left · 0 rate-limited/);
      // The chart's scale reaches the busiest day: its top tick is at least the day's requests.
      const ticks = (await devPage.locator('#usage-chart .tick-y').allTextContents()).map(Number);
      assert.equal(ticks[0], 0);
      assert.ok(ticks.at(-1)! >= Math.max(...rows.map((row) => Number(row[columns.indexOf('2xx')]) + Number(row[columns.indexOf('4xx')]))), `ticks ${ticks}`);
      const errors = await devPage.locator('#usage-errors li').allTextContents();
      // The failed refresh, and the API's 401 to the revoked token (the app's request too).
      assert.equal(errors.length, 2, errors.join('; '));
      assert.ok(errors.some((line) => /400 invalid_grant · \/oauth2\/token/.test(line)), errors.join('; '));
      assert.ok(errors.some((line) => /401 .*\/v1\/users\/me/.test(line)), errors.join('; '));
      await keepScreenshot(flows, devPage.getByRole('heading', { name: 'Usage, last 30 days' }).locator('..'), 'app-usage');
    });
  });
}
