/**
 * Stored cross-site scripting: text a developer or a person saved (app names, redirect URIs,
 * display names) is shown on every page only as text, never as markup.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { authorizeUrl, Browser, createOAuthTestApp } from '../oauth/flow.js';
import { formPage, grantThroughConsent, PASSWORD, signedIn } from './pages-support.js';

/** Breaks out of text, of a double- or single-quoted attribute, and of an unquoted one. */
const PAYLOAD = `"'><script>alert(1)</script><img src=x onerror=alert(2)>`;
const REDIRECT_URI = `https://client.example/cb?next="'><script>alert(3)</script>`;

/** Where the page holds markup only the payload could have made (a tag, or a quote breaking out of an attribute). */
function injected(html: string): string | null {
  for (const marker of [/<script>alert/i, /<img src=x/i, /"'>/]) {
    const match = marker.exec(html);
    if (match) return html.slice(Math.max(0, match.index - 80), match.index + 80);
  }
  return null;
}

forEachDialect('stored text on every page', (dialect) => {
  let t: TestApp;
  let developer: Browser;
  let person: Browser;
  let clientId: string;

  before(async () => {
    t = await createOAuthTestApp(dialect);
    const owner = await createAccount(t.database.stores.users, t.clock, { email: 'dev-xss@example.com', password: PASSWORD, displayName: `Dev ${PAYLOAD}` });
    const user = await createAccount(t.database.stores.users, t.clock, { email: 'walker-xss@example.com', password: PASSWORD, displayName: `Walker ${PAYLOAD}` });
    const registered = await registerApp(t.database.stores.apps, t.clock, owner.id, {
      name: `App ${PAYLOAD}`.slice(0, 80),
      redirectUris: [REDIRECT_URI],
      scopes: ['read_profile'],
      isPublic: false,
    });
    clientId = registered.app.clientId;
    developer = await signedIn(t, owner);
    person = await signedIn(t, user);
    await grantThroughConsent(t, person, registered.app, registered.clientSecret!, REDIRECT_URI);
  });
  after(() => t.close());

  it('shows the payloads as text on the consent, account and dashboard pages', async () => {
    const pages: Array<[string, Browser, string]> = [
      ['consent', person, authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, prompt: 'consent' })],
      ['account', person, '/account'],
      ['dashboard', developer, '/dashboard'],
      ['app page', developer, `/dashboard/apps/${clientId}`],
      ['delete confirmation', developer, `/dashboard/apps/${clientId}/delete`],
    ];
    for (const [name, browser, url] of pages) {
      const page = await browser.get(url);
      assert.equal(page.status, 200, `${name}: ${page.body.slice(0, 200)}`);
      assert.match(page.body, /&lt;script&gt;alert/, `${name} shows the stored text`);
      assert.equal(injected(page.body), null, `${name} carries markup from stored text`);
    }
  });

  it('shows a display name as text in the signed-in header of every page', async () => {
    for (const url of ['/account', '/dashboard', '/dashboard/apps/new']) {
      const page = await formPage(person, url);
      assert.equal(page.status, 200, url);
      assert.match(page.body, /Walker &quot;&#39;&gt;&lt;script&gt;/, url);
      assert.equal(injected(page.body), null, url);
    }
  });
});
