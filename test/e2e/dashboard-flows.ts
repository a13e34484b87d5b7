/**
 * In a real browser: Deny on consent, unticked scopes, a scope change in the dashboard that ends
 * only the differing grants, secret rotation, and a form posted without its CSRF token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type BrowserFlows, registerAppInDashboard, type RegisteredInBrowser, keepScreenshot, signIn, signInAsNew, type Stride, ThirdPartyApp, type TokenSet, uniqueEmail } from './support.js';

export function dashboardFlows(flows: BrowserFlows): void {
  describe('dashboard and consent in a real browser', () => {
    let browser: Browser;
    let stride: Stride;
    let client: ThirdPartyApp;
    let devPage: Page;
    let registered: RegisteredInBrowser;
    const people: Record<string, { context: BrowserContext; page: Page; email: string }> = {};
    /** Tokens of the person who unticked write_activity, and of the one who allowed everything. */
    let partial: TokenSet;
    let full: TokenSet;
    /** The browser contexts this flow opened, closed after it (the browser is shared). */
    const contexts: BrowserContext[] = [];

    async function newContext(): Promise<BrowserContext> {
      const context = await browser.newContext();
      contexts.push(context);
      return context;
    }

    /** A person in their own browser context, signed up through the authorize request. */
    async function person(name: string): Promise<Page> {
      const context = await newContext();
      const page = await context.newPage();
      people[name] = { context, page, email: uniqueEmail(name.toLowerCase()) };
      return page;
    }

    async function authorize(page: Page, state: string, options: { untick?: string[]; decision: 'Allow' | 'Deny'; asNewPerson?: string }): Promise<void> {
      await page.goto(client.authorizeUrl(state, undefined, 'consent'));
      if (options.asNewPerson) await signInAsNew(page, stride, options.asNewPerson, people[options.asNewPerson]!.email);
      await page.getByRole('heading', { name: /Step Counter wants to access/ }).waitFor();
      for (const words of options.untick ?? []) await page.getByRole('checkbox', { name: words }).uncheck();
      await page.getByRole('button', { name: options.decision, exact: true }).click();
      await page.locator('#result').waitFor();
    }

    before(async () => {
      ({ browser, stride } = flows);
      client = new ThirdPartyApp(stride);
      await client.start();
      devPage = await newContext().then((context) => context.newPage());
      await devPage.goto(`${stride.url}/login?return_to=%2Fdashboard`);
      await signInAsNew(devPage, stride, 'Dev', uniqueEmail('dev'));
      registered = await registerAppInDashboard(devPage, stride, {
        name: 'Step Counter',
        description: 'Counts your steps',
        redirectUri: client.redirectUri,
        scopes: ['read_profile', 'read_activity', 'write_activity'],
      });
      client.clientId = registered.clientId;
      client.clientSecret = registered.clientSecret;
    });

    after(async () => {
      for (const context of contexts) await context.close();
      await client?.stop();
    });

    it('Deny on the consent page sends access_denied with the state to the app', async () => {
      const page = await person('Denise');
      await authorize(page, 'deny-state-1', { decision: 'Deny', asNewPerson: 'Denise' });
      assert.deepEqual(client.lastCallback, { error: 'access_denied', state: 'deny-state-1' });
      assert.equal(await page.locator('#result').textContent(), 'access_denied');
    });

    it('an unticked scope is not granted: the token lacks it and the API answers 403', async () => {
      const page = await person('Una');
      await authorize(page, 'untick', { decision: 'Allow', asNewPerson: 'Una', untick: ['Add and change your steps, distance and calories'] });
      partial = client.tokens();
      assert.equal(partial.scope, 'read_profile read_activity');
      const upload = await client.api(partial.access_token, '/v1/users/me/activities/steps', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ samples: [{ start_time: 1_700_000_040, value: 12 }] }),
      });
      assert.equal(upload.status, 403);
      assert.equal(((await upload.json()) as { error: string }).error, 'insufficient_scope');
      assert.equal((await client.api(partial.access_token, '/v1/users/me/activities/steps')).status, 200);

      const everything = await person('Fulla');
      await authorize(everything, 'all', { decision: 'Allow', asNewPerson: 'Fulla' });
      full = client.tokens();
      assert.equal(full.scope, 'read_profile read_activity write_activity');
    });

    it('a scope change in the dashboard says how many grants end, then ends only the differing ones', async () => {
      await devPage.goto(registered.detailUrl);
      await keepScreenshot(flows, devPage, 'app-detail');
      await devPage.locator('#scope-write_activity').uncheck();
      await devPage.getByRole('button', { name: 'Save changes' }).click();
      await devPage.getByRole('heading', { name: 'Change the scopes of Step Counter?' }).waitFor();
      assert.match((await devPage.locator('#grants-ended').textContent())!, /1 user's grant\s+will end/);
      await keepScreenshot(flows, devPage, 'scope-change-confirm');
      // Nothing has changed before the confirmation.
      assert.equal((await client.api(full.access_token)).status, 200);
      await devPage.getByRole('button', { name: 'Change the scopes' }).click();
      await devPage.getByRole('status').filter({ hasText: "1 user's grant was ended" }).waitFor();

      assert.equal((await client.api(full.access_token)).status, 401, 'the grant with write_activity ended');
      assert.equal((await client.api(partial.access_token)).status, 200, 'the grant with the new scope set stays');
      assert.equal(((await (await client.refresh(full.refresh_token)).json()) as { error: string }).error, 'invalid_grant');
      const refreshed = await client.refresh(partial.refresh_token);
      assert.equal(refreshed.status, 200);
      partial = (await refreshed.json()) as TokenSet;
    });

    it('rotating the secret in the dashboard: the old secret gets invalid_client, the new one works', async () => {
      await devPage.goto(registered.detailUrl);
      await devPage.getByRole('button', { name: 'Rotate the client secret' }).click();
      await devPage.getByText('shown only this once').waitFor();
      const newSecret = (await devPage.locator('#client-secret').textContent())!.trim();
      assert.notEqual(newSecret, registered.clientSecret);

      const old = await client.refresh(partial.refresh_token, registered.clientSecret);
      assert.equal(old.status, 401);
      assert.equal(((await old.json()) as { error: string }).error, 'invalid_client');
      const fresh = await client.refresh(partial.refresh_token, newSecret);
      assert.equal(fresh.status, 200, await fresh.clone().text());
      // The page after reload no longer shows it.
      await devPage.goto(registered.detailUrl);
      assert.equal(await devPage.locator('#client-secret').count(), 0);
      await keepScreenshot(flows, devPage, 'app-detail-after-rotation');
    });

    it('a form posted without its CSRF token is refused with 403 and changes nothing', async () => {
      const { page } = people.Una!;
      await page.goto(`${stride.url}/account`);
      await page.getByLabel('Display name').fill('Changed without a token');
      await page.locator('form[action="/account/profile"] input[name="csrf_token"]').evaluate((input) => input.remove());
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/account/profile') && r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Save profile' }).click(),
      ]);
      assert.equal(response.status(), 403);
      await page.getByRole('heading', { name: 'Request refused' }).waitFor();
      await page.goto(`${stride.url}/account`);
      assert.equal(await page.getByLabel('Display name').inputValue(), 'Una');

      // The same for a dashboard form (delete), and the app is still there.
      await devPage.goto(`${registered.detailUrl}/delete`);
      await devPage.locator('input[name="csrf_token"]').evaluateAll((inputs) => inputs.forEach((input) => input.remove()));
      await devPage.getByRole('button', { name: 'Delete the app' }).click();
      await devPage.getByRole('heading', { name: 'Request refused' }).waitFor();
      await devPage.goto(registered.detailUrl);
      await devPage.getByRole('heading', { name: 'Step Counter' }).waitFor();
    });

    it('signing in again from the login page lands on the account page', async () => {
      const page = await (await newContext()).newPage();
      await page.goto(`${stride.url}/login`);
      await signIn(page, people.Una!.email);
      assert.equal(new URL(page.url()).pathname, '/account');
      await page.getByRole('button', { name: /Sign out/ }).click();
      assert.equal(new URL(page.url()).pathname, '/login');
    });
  });
}
