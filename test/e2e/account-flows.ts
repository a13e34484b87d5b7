/**
 * A person's own data in a real browser: the download, the sessions of two browsers and signing
 * one out from the other, a password change, and deleting the account.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type BrowserFlows, PASSWORD, keepScreenshot, signIn, signInAsNew, signUp, type Stride, uniqueEmail } from './support.js';

export function accountFlows(flows: BrowserFlows): void {
  describe('your data and sessions in a real browser', () => {
    let browser: Browser;
    let stride: Stride;
    let laptop: BrowserContext;
    let phone: BrowserContext;
    let page: Page;
    let phonePage: Page;
    let email: string;

    before(async () => {
      ({ browser, stride } = flows);
      laptop = await browser.newContext({ acceptDownloads: true });
      phone = await browser.newContext({ userAgent: 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36' });
      page = await laptop.newPage();
      phonePage = await phone.newPage();
      email = uniqueEmail('owner');
      await page.goto(`${stride.url}/login`);
      await signInAsNew(page, stride, 'Owner', email);
      await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      await phonePage.goto(`${stride.url}/login`);
      await signIn(phonePage, email);
      await phonePage.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    });
    after(async () => {
      await laptop.close();
      await phone.close();
    });

    it('downloads everything Stride holds', async () => {
      await page.goto(`${stride.url}/account`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download everything (JSON)' }).click()]);
      assert.equal(download.suggestedFilename(), 'stride-export.json');
      const data = JSON.parse(readFileSync((await download.path())!, 'utf8'));
      assert.equal(data.email, email);
      assert.equal(data.sessions.length, 2);
      assert.deepEqual(data.steps, []);

      const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Steps (CSV)' }).click()]);
      assert.match(csv.suggestedFilename(), /\.csv$/);
      assert.equal(readFileSync((await csv.path())!, 'utf8').trim(), 'start_time,value');
    });

    it('signs the phone out from the laptop', async () => {
      await page.goto(`${stride.url}/account`);
      await page.getByRole('heading', { name: /Chrome on Android/ }).waitFor();
      await keepScreenshot(flows, page, 'account-sessions');
      await page.getByRole('button', { name: 'End that session' }).click();
      await page.getByText('Signed out there').waitFor();
      await phonePage.reload();
      await phonePage.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
    });

    it('ends every other session at once', async () => {
      await phonePage.goto(`${stride.url}/login`);
      await signIn(phonePage, email);
      await phonePage.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      await page.goto(`${stride.url}/account`);
      await page.getByRole('button', { name: 'End every other session' }).click();
      await page.getByRole('status').waitFor();
      await phonePage.reload();
      await phonePage.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    });

    it('changes the password, which signs the other sessions out, then deletes the account', async () => {
      await signIn(phonePage, email);
      await phonePage.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      await page.goto(`${stride.url}/account`);
      await page.getByLabel('Current password').fill(PASSWORD);
      await page.getByLabel('New password').fill('another long password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Your password is changed').waitFor();
      await phonePage.reload();
      await phonePage.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();

      await page.getByLabel('Your password, to confirm').fill('another long password');
      await page.getByRole('button', { name: 'Delete my account' }).click();
      await page.getByRole('heading', { name: 'Your account is deleted' }).waitFor();
      await keepScreenshot(flows, page, 'account-deleted');
      await page.goto(`${stride.url}/account`);
      await page.getByRole('heading', { name: 'Sign in to Stride' }).waitFor();

      // The email is free again: a new account can be made with it, and starts empty.
      await signUp(page, 'Owner Again', email);
      await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      assert.equal(await page.getByLabel('Display name').inputValue(), 'Owner Again');
    });
  });
}
