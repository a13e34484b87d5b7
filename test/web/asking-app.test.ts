/** The sign-in and sign-up pages reached from an authorization request say which app is asking. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { authorizeUrl, Browser, createFixture, createOAuthTestApp, REDIRECT_URI, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { textOf } from './pages-support.js';

cheapPasswordHashing();

forEachDialect('the app asking, on sign-in and sign-up', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('names the app and its developer on the sign-in page an authorization request leads to, and on its sign-up link', async () => {
    const browser = new Browser(t.app);
    const request = await browser.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, state: 's' }));
    assert.equal(request.status, 302);
    const login = await browser.get(request.location().pathname + request.location().search);
    assert.equal(login.status, 200);
    assert.equal(textOf(login.body, 'asking-app'), 'Pace Coach, made by Ada Developer, asks to connect to your Stride account. Sign in to choose what it may see: nothing is shared until you allow it.');
    const signupLink = /href="(\/signup\?return_to=[^"]+)"/.exec(login.body)![1]!.replace(/&amp;/g, '&');
    const signup = await browser.get(signupLink);
    assert.match(textOf(signup.body, 'asking-app') ?? '', /^Pace Coach, made by Ada Developer, asks to connect to your Stride account\. Create your account/);
  });

  it('names no app for another page, an unknown client id or a client id given twice, and shows a name as text', async () => {
    const browser = new Browser(t.app);
    const returnTos = ['/dashboard', '/oauth2/authorize?client_id=nope', `/oauth2/authorize?client_id=${f.app.clientId}&client_id=${f.publicApp.clientId}`, '/oauth2/authorize'];
    for (const returnTo of returnTos) {
      const login = await browser.get(`/login?return_to=${encodeURIComponent(returnTo)}`);
      assert.equal(login.status, 200, returnTo);
      assert.equal(textOf(login.body, 'asking-app'), undefined, returnTo);
    }
    const marked = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: '<b>Bold</b> App', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false });
    const login = await browser.get(`/login?return_to=${encodeURIComponent(`/oauth2/authorize?client_id=${marked.app.clientId}`)}`);
    assert.match(login.body, /&lt;b&gt;Bold&lt;\/b&gt; App/);
    assert.doesNotMatch(login.body, /<b>Bold/);
  });
});
