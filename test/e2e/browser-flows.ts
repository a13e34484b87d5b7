/**
 * The flows a person goes through in a real browser (Debian's Chromium), against a real
 * `stride serve`: connecting an app and revoking it (connected-app.ts); consent, scope changes,
 * secret rotation and CSRF in the dashboard (dashboard-flows.ts); errors, reloads, Back and an
 * ended session at the edges (trust-flows.ts); a person's data and sessions (account-flows.ts);
 * an app's webhook endpoint (webhook-flows.ts, to a receiver on 127.0.0.1, which WEBHOOK_ALLOW_PRIVATE permits);
 * a developer's test person connected through the app's real redirect (sandbox-flows.ts);
 * a person's data in charts, on a phone and a computer, light and dark (data-flows.ts);
 * a Fitbit history brought from a Google Takeout archive on the account page (takeout-flows.ts);
 * every kind of page against WCAG 2.1 AA with axe-core (accessibility-flows.ts); an app that runs
 * in the page on its own origin and calls Stride through CORS (browser-app-flow.ts).
 * One Chromium and one server serve every flow on a database: starting them is most of what a
 * flow would add on its own. Each database has its own test file, so that the two run side by side.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Dialect } from '../../src/db/database.js';
import { browserUnavailable, launchBrowser } from '../support/browser.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { postgresUnavailable } from '../support/databases.js';
import { accessibilityFlows } from './accessibility-flows.js';
import { accountFlows } from './account-flows.js';
import { browserAppFlow } from './browser-app-flow.js';
import { connectedAppFlow } from './connected-app.js';
import { dashboardFlows } from './dashboard-flows.js';
import { dataFlows } from './data-flows.js';
import { sandboxFlow } from './sandbox-flows.js';
import { takeoutFlows } from './takeout-flows.js';
import { startStride, type BrowserFlows } from './support.js';
import { trustFlows } from './trust-flows.js';
import { webhookFlows } from './webhook-flows.js';

/** The accounts this process makes for the flows (Stride.createAccount); the server's own hashing stays real. */
cheapPasswordHashing();

export function browserFlowsOn(dialect: Dialect): void {
  const skip = browserUnavailable() ?? (dialect === 'postgres' ? postgresUnavailable() : null);
  describe(`in a real browser, on ${dialect}`, { skip: skip ?? false }, () => {
    const flows = { dialect } as BrowserFlows;
    /** What any page logged as an error (a script error, a refused inline style or script, …). */
    const consoleErrors: string[] = [];
    before(async () => {
      // Each is kept as soon as it is up, so that if the other fails to start, `after` still closes
      // this one (a Chromium left running would keep the test process alive).
      await Promise.all([
        launchBrowser().then((browser) => (flows.browser = watchConsoles(browser, consoleErrors))),
        startStride(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', SANDBOX_DAYS: '2' }).then((stride) => (flows.stride = stride)),
      ]);
    });
    after(async () => {
      await flows.browser?.close();
      await flows.stride?.close();
    });

    connectedAppFlow(flows);
    // On PostgreSQL the one flow above is a smoke test of the served process on that database: the
    // pages, scripts and CORS headers are the same on either, and what each page reads and writes
    // is tested on both databases through the same routes (test/web, test/api, test/store).
    if (dialect === 'sqlite') {
      dashboardFlows(flows);
      trustFlows(flows);
      accountFlows(flows);
      webhookFlows(flows);
      sandboxFlow(flows);
      dataFlows(flows);
      takeoutFlows(flows);
      accessibilityFlows(flows);
      browserAppFlow(flows);
    }

    it('no page logged an error in the browser console', () => {
      assert.deepEqual(consoleErrors, []);
    });
  });
}

/**
 * Makes every context of `browser` report its pages' console errors and uncaught exceptions into
 * `errors`. A document answered with an error status is logged as "Failed to load resource": the
 * flows that cause one on purpose check its status themselves, so those lines are left out.
 */
function watchConsoles(browser: Browser, errors: string[]): Browser {
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(`${message.location().url}: ${message.text()}`);
    });
    context.on('weberror', (error) => errors.push(`uncaught: ${error.error().message}`));
    return context;
  };
  return browser;
}
