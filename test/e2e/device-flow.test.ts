/**
 * The device authorization grant (RFC 8628) end to end: a `stride serve` of its own on SQLite, a
 * developer allowing the grant in the dashboard, a device (openid-client) asking for codes and
 * polling, and a person on a phone-sized Chromium opening verification_uri_complete, signing in,
 * typing nothing more (or the code, in lower case) and allowing. The /device pages pass axe's
 * WCAG 2.1 A and AA rules and fit a phone's screen. The grant's rows on PostgreSQL are tested through
 * the same routes in test/oauth/device.test.ts and across processes in
 * test/oauth/device-processes.ts (test/processes.test.ts); the pages and the browser are the same on either database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { browserUnavailable, launchBrowser } from '../support/browser.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { assertFitsTheScreen, signIn, startStride, uniqueEmail, type Stride } from './support.js';

cheapPasswordHashing();

async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).setLegacyMode(true).analyze();
  return results.violations.map((v) => `${new URL(page.url()).pathname}: ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * Seconds the device waits between polls, told by the server (DEVICE_POLL_INTERVAL): the device
 * polls from before the person opens the page until they allow, and at RFC 8628's 5 s it would
 * wait up to 5 s more for its tokens after they did.
 */
const POLL_INTERVAL = 1;

describe('device authorization in a real browser, on sqlite', { skip: browserUnavailable() ?? false }, () => {
  let browser: Browser;
  let stride: Stride;
  let clientId: string;
  before(async () => {
    await Promise.all([launchBrowser().then((b) => (browser = b)), startStride('sqlite', { DEVICE_POLL_INTERVAL: String(POLL_INTERVAL) }).then((s) => (stride = s))]);
  });
  after(async () => {
    await browser?.close();
    await stride?.close();
  });

  it('lets a developer allow the device grant on the dashboard', async () => {
    const email = uniqueEmail('maker');
    await stride.createAccount('Device Maker', email);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stride.url}/login`);
    await signIn(page, email);
    await page.goto(`${stride.url}/dashboard`);
    await page.getByRole('link', { name: 'Register a new app' }).click();
    await page.getByLabel('App name').fill('Living Room Scale');
    await page.getByLabel('Redirect URIs').fill('https://scale.example/callback');
    await page.locator('#scope-read_activity').setChecked(true);
    await page.getByRole('radio', { name: /Public/ }).check();
    await page.locator('#grant-type-device_code').check();
    await page.getByRole('button', { name: 'Register app' }).click();
    await page.getByRole('heading', { name: 'Living Room Scale is registered' }).waitFor();
    clientId = (await page.locator('#client-id').textContent())!.trim();
    await context.close();
  });

  it('connects a device once a person on a phone signs in, sees the code and allows', async () => {
    assert.ok(clientId, 'the app was registered');
    const personEmail = uniqueEmail('walker');
    await stride.createAccount('Walker', personEmail);
    const issuer = new URL(stride.url);
    const config = await client.discovery(issuer, clientId, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
    const started = await client.initiateDeviceAuthorization(config, { scope: 'read_profile read_activity' });
    assert.equal(started.interval, POLL_INTERVAL);
    const polling = client.pollDeviceAuthorizationGrant(config, started);

    const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
    const page = await phone.newPage();
    await page.goto(started.verification_uri_complete!);
    await page.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
    await signIn(page, personEmail);
    await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
    assert.equal(await page.getByLabel('Code shown on your device').inputValue(), started.user_code, 'the code came along through sign-in');
    assert.deepEqual(await axeViolations(page), []);
    await assertFitsTheScreen(page);
    // Typed as a person might: lower case, no hyphen.
    await page.getByLabel('Code shown on your device').fill(started.user_code.replace('-', '').toLowerCase());
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Living Room Scale wants to access your Stride account' }).waitFor();
    assert.match((await page.locator('#device-notice').textContent())!, new RegExp(started.user_code));
    assert.deepEqual(await axeViolations(page), []);
    await assertFitsTheScreen(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByText('Living Room Scale is connected').waitFor();

    const tokens = await polling;
    assert.equal(tokens.scope, 'read_profile read_activity');
    const profile = await fetch(`${stride.url}/v1/users/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(profile.status, 200);
    await phone.close();
  });
});
