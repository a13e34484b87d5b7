/** The consent page shows an app's description as its developer meant it: `code spans` as code, never as markup. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import { codeSpans } from '../../src/web/views.js';
import { authorizeAndAllow, authorizeUrl, Browser, createFixture, createOAuthTestApp, REDIRECT_URI, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { signedIn, textOf } from './pages-support.js';

cheapPasswordHashing();

it('splits text into code spans between pairs of backticks, leaving a backtick without a pair as typed', () => {
  assert.deepEqual(codeSpans('Made by `stride demo` to try.'), [
    { code: false, text: 'Made by ' },
    { code: true, text: 'stride demo' },
    { code: false, text: ' to try.' },
  ]);
  assert.deepEqual(codeSpans('a `b` c `d'), [{ code: false, text: 'a ' }, { code: true, text: 'b' }, { code: false, text: ' c `d' }]);
  assert.deepEqual(codeSpans('no code'), [{ code: false, text: 'no code' }]);
  assert.deepEqual(codeSpans(''), []);
});

forEachDialect('consent page', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('shows the description with its code spans as code, and any markup in it as text', async () => {
    const { app } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Demo', description: 'Created by `stride demo` to try the `<b>flow</b>`, <i>really</i>.', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false,
    });
    const page = await (await signedIn(t, f.user)).get(authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI, state: 's' }));
    assert.equal(page.status, 200);
    const description = /<p id="app-description">([\s\S]*?)<\/p>/.exec(page.body)![1];
    assert.equal(description, 'Created by <code>stride demo</code> to try the <code>&lt;b&gt;flow&lt;/b&gt;</code>, &lt;i&gt;really&lt;/i&gt;.');
    assert.doesNotMatch(page.body, /`stride demo`/);
  });

  it('says of every app that Stride did not make it: made by its developer, not by Stride, or registered itself', async () => {
    const browser = await signedIn(t, f.user);
    const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, state: 's' }));
    assert.equal(page.status, 200);
    assert.equal(textOf(page.body, 'app-maker'), 'Made by Ada Developer, not by Stride');
    const open = await createOAuthTestApp(dialect, { REGISTRATION: 'open', REGISTRATION_OWNER: 'operator@example.com' });
    try {
      await createAccount(open.database.stores.users, open.clock, { email: 'operator@example.com', password: 'correct horse battery', displayName: 'Operator' });
      const person = await createFixture(open);
      const registered = await open.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: [REDIRECT_URI], client_name: 'Pace Coach for Stride', scope: 'read_profile' } });
      assert.equal(registered.statusCode, 201, registered.body);
      const own = await (await signedIn(open, person.user)).get(authorizeUrl({ response_type: 'code', client_id: registered.json().client_id, redirect_uri: REDIRECT_URI, state: 's' }));
      assert.match(textOf(own.body, 'self-registered') ?? '', /^Pace Coach for Stride is not made by Stride: it registered itself, and no one here vouches for who made it\./);
    } finally {
      await open.close();
    }
  });

  it('credits no one with an app that registered itself (RFC 7591 §5): not the operator who owns it, whatever it calls itself', async () => {
    const open = await createOAuthTestApp(dialect, { REGISTRATION: 'open', REGISTRATION_OWNER: 'operator@example.com' });
    try {
      await createAccount(open.database.stores.users, open.clock, { email: 'operator@example.com', password: 'correct horse battery', displayName: 'Stride Operator' });
      const person = await createFixture(open);
      const registered = await open.app.inject({
        method: 'POST', url: '/oauth2/register',
        payload: { redirect_uris: [REDIRECT_URI], client_name: 'Pace Coach Official', client_uri: 'https://pace-coach.example', scope: 'read_profile' },
      });
      assert.equal(registered.statusCode, 201, registered.body);
      const browser = await signedIn(open, person.user);
      const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: registered.json().client_id, redirect_uri: REDIRECT_URI, state: 's' }));
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.body, /Made by/);
      assert.doesNotMatch(page.body, /Stride Operator/);
      assert.match(page.body, /id="self-registered"/);
      assert.match(page.body, /Its name and its website, https:\/\/pace-coach\.example, are its own claims\./);
      // Without a website, the sentence speaks of the name alone.
      const nameOnly = await open.app.inject({
        method: 'POST', url: '/oauth2/register',
        payload: { redirect_uris: [REDIRECT_URI], client_name: 'My Watch', scope: 'read_profile' },
      });
      assert.equal(nameOnly.statusCode, 201, nameOnly.body);
      const watch = await browser.get(authorizeUrl({ response_type: 'code', client_id: nameOnly.json().client_id, redirect_uri: REDIRECT_URI, state: 's' }));
      assert.match(watch.body, /no one here vouches for who made it\. Its name is its own claim\.<\/p>/);
      // An app made on the dashboard still names its developer.
      const own = await browser.get(authorizeUrl({ response_type: 'code', client_id: person.app.clientId, redirect_uri: REDIRECT_URI, state: 's' }));
      assert.match(own.body, /Made by <strong>Ada Developer<\/strong>/);

      // Nor do the pages before and after it: sign-in asking for the password, the account page
      // and the export once the person allowed it.
      const official = authorizeUrl({ response_type: 'code', client_id: registered.json().client_id, redirect_uri: REDIRECT_URI, state: 's' });
      const signInPage = await new Browser(open.app).get(`/login?return_to=${encodeURIComponent(official)}`);
      assert.equal(textOf(signInPage.body, 'asking-app'), 'Pace Coach Official, an app that registered itself (its name is its own claim), asks to connect to your Stride account. Sign in to choose what it may see: nothing is shared until you allow it.');
      await authorizeAndAllow(browser, official);
      const account = await browser.get('/account');
      assert.match(account.body, /Registered itself: its name is its own claim/);
      assert.doesNotMatch(account.body, /Stride Operator/);
      const exported = (await browser.get('/account/export.json')).json() as { connected_apps: Array<{ app: string; developer: string | null }> };
      assert.deepEqual(exported.connected_apps.map(({ app, developer }) => ({ app, developer })), [{ app: 'Pace Coach Official', developer: null }]);
    } finally {
      await open.close();
    }
  });
});
