/**
 * App ids the account page reads from the URL (`?revoked=`, `/account/connected-apps/:appId/revoke`)
 * are looked up only when they could be one: PostgreSQL refuses a NUL in a text value, so one that
 * reached a statement answered 500 (found by test/fuzz/web.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { formFields } from '../oauth/flow.js';
import { newAccount, signedIn } from './pages-support.js';

forEachDialect('app ids on the account page', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('name no app when they hold a NUL, on a page or a revoke form', async () => {
    const browser = await signedIn(t, await newAccount(t));
    for (const id of ['%00', 'a%00b']) {
      const page = await browser.get(`/account?revoked=${id}`);
      assert.equal(page.status, 200, page.body.slice(0, 300));
      // Every form of the page carries the session's one CSRF token.
      const revoke = await browser.post(`/account/connected-apps/${id}/revoke`, formFields(page.body, '/account/profile'));
      assert.equal(revoke.status, 303, revoke.body.slice(0, 300));
    }
  });
});
