/**
 * The flows a person goes through in a real browser (Debian's Chromium), against a real
 * `stride serve`: connecting an app and revoking it (connected-app.ts); consent, scope changes,
 * secret rotation and CSRF in the dashboard (dashboard-flows.ts); errors, reloads, Back and an
 * ended session at the edges (trust-flows.ts); a person's data and sessions (account-flows.ts);
 * an app's webhook endpoint (webhook-flows.ts, to a receiver on 127.0.0.1, which WEBHOOK_ALLOW_PRIVATE permits).
 * One Chromium and one server serve every flow on a database: starting them is most of what a
 * flow would add on its own. Each database has its own test file, so that the two run side by side.
 */
import { after, before, describe } from 'node:test';
import type { Dialect } from '../../src/db/database.js';
import { browserUnavailable, launchBrowser } from '../support/browser.js';
import { POSTGRES_URL } from '../support/databases.js';
import { accountFlows } from './account-flows.js';
import { connectedAppFlow } from './connected-app.js';
import { dashboardFlows } from './dashboard-flows.js';
import { startStride, type BrowserFlows } from './support.js';
import { trustFlows } from './trust-flows.js';
import { webhookFlows } from './webhook-flows.js';

export function browserFlowsOn(dialect: Dialect): void {
  const skip = browserUnavailable() ?? (dialect === 'postgres' && !POSTGRES_URL ? 'TEST_DATABASE_URL is not set' : null);
  describe(`in a real browser, on ${dialect}`, { skip: skip ?? false }, () => {
    const flows = { dialect } as BrowserFlows;
    before(async () => {
      // Each is kept as soon as it is up, so that if the other fails to start, `after` still closes
      // this one (a Chromium left running would keep the test process alive).
      await Promise.all([
        launchBrowser().then((browser) => (flows.browser = browser)),
        startStride(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' }).then((stride) => (flows.stride = stride)),
      ]);
    });
    after(async () => {
      await flows.browser?.close();
      await flows.stride?.close();
    });

    connectedAppFlow(flows);
    dashboardFlows(flows);
    trustFlows(flows);
    accountFlows(flows);
    webhookFlows(flows);
  });
}
