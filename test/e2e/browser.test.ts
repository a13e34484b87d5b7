/**
 * The flows a person goes through in a real browser (Debian's Chromium), against a real
 * `stride serve`: connecting an app and revoking it (connected-app.ts); consent, scope changes,
 * secret rotation and CSRF in the dashboard (dashboard-flows.ts); errors, reloads, Back and an
 * ended session at the edges (trust-flows.ts); a person's data and sessions (account-flows.ts).
 * Every flow runs on SQLite, and on PostgreSQL too when TEST_DATABASE_URL is set. One Chromium
 * serves both, and one server each database's flows: starting them is most of what a flow would add.
 */
import { after, before, describe } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserUnavailable, launchBrowser } from '../support/browser.js';
import { DIALECTS } from '../support/databases.js';
import { connectedAppFlow } from './connected-app.js';
import { dashboardFlows } from './dashboard-flows.js';
import { startStride, type BrowserFlows } from './support.js';
import { trustFlows } from './trust-flows.js';
import { accountFlows } from './account-flows.js';

const skip = browserUnavailable();

describe('in a real browser', { skip: skip ?? false }, () => {
  let browser: Promise<Browser> | undefined;
  // A Chromium left running would keep the test process alive: it is closed even when a server
  // failed to start.
  after(async () => (await browser?.catch(() => undefined))?.close());

  for (const dialect of DIALECTS) {
    describe(`on ${dialect}`, () => {
      const flows = { dialect } as BrowserFlows;
      before(async () => {
        browser ??= launchBrowser();
        await Promise.all([
          browser.then((launched) => (flows.browser = launched)),
          startStride(dialect).then((stride) => (flows.stride = stride)),
        ]);
      });
      after(() => flows.stride?.close());

      connectedAppFlow(flows);
      dashboardFlows(flows);
      trustFlows(flows);
      accountFlows(flows);
    });
  }
});
