/**
 * A form sent after the session ended: the person signs in again and is back on the form with what
 * they typed, to send it again themselves with a fresh CSRF token; consent says what happened and
 * leads back to the request. Nothing is done on their behalf, and nothing is lost.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { authorizeUrl, Browser, createFixture, createOAuthTestApp, formFields, REDIRECT_URI, signIn, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { PASSWORD, textOf } from './pages-support.js';

cheapPasswordHashing();

/** The value a text input of the page shows. */
const inputValue = (html: string, name: string) => new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1];

forEachDialect('forms sent after the session ended', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  /** A signed-in browser whose session then ends on the server (expired, swept, or signed out elsewhere). */
  const sessionEnds = async (userId: string) => {
    await t.database.db.kysely.deleteFrom('sessions').where('user_id', '=', userId).execute();
  };

  /** Signs in again from the page the expired form led to, and follows the redirect back. */
  const signInAgain = async (browser: Browser, loginUrl: URL, email: string) => {
    const login = await browser.get(loginUrl.pathname + loginUrl.search);
    assert.equal(login.status, 200);
    const signedIn = await signIn(browser, email, PASSWORD, loginUrl.searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    return { login, back: await browser.get(signedIn.location().pathname + signedIn.location().search) };
  };

  it('brings a developer back to the registration form with what they typed, and registers nothing until they send it', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.developer.email, PASSWORD);
    const form = await browser.get('/dashboard/apps/new');
    const fields: Record<string, string | string[]> = { ...formFields(form.body, '/dashboard/apps'), name: 'Typed Before Expiry', description: 'Kept <b>as typed</b>', redirect_uris: 'https://typed.example/cb', scopes: ['read_profile', 'read_activity'], client_type: 'confidential' };
    await sessionEnds(f.developer.id);

    const sent = await browser.post('/dashboard/apps', fields);
    assert.equal(sent.status, 303);
    const loginUrl = sent.location();
    assert.equal(loginUrl.pathname, '/login');
    assert.equal(loginUrl.searchParams.get('return_to'), '/dashboard/apps/new');
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').where('name', '=', 'Typed Before Expiry').execute()).length, 0);

    const { login, back } = await signInAgain(browser, loginUrl, f.developer.email);
    assert.match(textOf(login.body, 'notice')!, /what you typed/);
    assert.equal(back.status, 200);
    assert.match(textOf(back.body, 'notice')!, /What you typed is back/);
    const refilled = formFields(back.body, '/dashboard/apps');
    assert.equal(inputValue(back.body, 'name'), 'Typed Before Expiry');
    assert.equal(refilled.registration_id, fields.registration_id, 'the same registration, so sending it twice still makes one app');
    assert.notEqual(refilled.csrf_token, fields.csrf_token, 'a fresh CSRF token for the new session');
    assert.match(back.body, /Kept &lt;b&gt;as typed&lt;\/b&gt;/);
    assert.match(back.body, /https:\/\/typed.example\/cb/);

    // Sent again by the person: registered once; a reload of the form no longer has the draft.
    const registered = await browser.post('/dashboard/apps', { ...fields, csrf_token: refilled.csrf_token! });
    assert.equal(registered.status, 303);
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').where('name', '=', 'Typed Before Expiry').execute()).length, 1);
    assert.equal(inputValue((await browser.get('/dashboard/apps/new')).body, 'name'), '');
  });

  it('brings a person back to their profile form with what they typed', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, PASSWORD);
    const page = await browser.get('/account');
    const fields = { ...formFields(page.body, '/account/profile'), display_name: 'Renamed Late', daily_step_goal: '12345' };
    await sessionEnds(f.user.id);
    const sent = await browser.post('/account/profile', fields);
    const { back } = await signInAgain(browser, sent.location(), f.user.email);
    assert.match(textOf(back.body, 'notice')!, /before your profile was saved/);
    assert.equal(inputValue(back.body, 'display_name'), 'Renamed Late');
    assert.equal(inputValue(back.body, 'daily_step_goal'), '12345');
    const user = await t.database.stores.users.findByEmail(f.user.email);
    assert.equal(user?.display_name, 'Walker', 'nothing was saved on their behalf');
  });

  it('brings a developer back to the webhook forms with what they typed', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.developer.email, PASSWORD);
    const listPath = `/dashboard/apps/${f.app.clientId}/webhooks`;
    const list = await browser.get(listPath);
    const fields: Record<string, string | string[]> = { ...formFields(list.body, listPath), url: 'https://hooks.example/typed', events: ['grant.revoked'] };
    await sessionEnds(f.developer.id);
    const sent = await browser.post(listPath, fields);
    const { back } = await signInAgain(browser, sent.location(), f.developer.email);
    assert.match(textOf(back.body, 'notice')!, /What you typed is back/);
    assert.equal(inputValue(back.body, 'url'), 'https://hooks.example/typed');
    assert.match(back.body, /value="grant.revoked" checked/);
    assert.doesNotMatch(back.body, /value="steps.updated" checked/);
    assert.equal(formFields(back.body, listPath).form_id, fields.form_id, 'the same form, so sending it twice adds one endpoint');
    assert.equal((await t.database.db.kysely.selectFrom('webhook_endpoints').select('id').where('url', '=', 'https://hooks.example/typed').execute()).length, 0, 'nothing added for them');
  });

  it('ignores a draft that was altered', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.developer.email, PASSWORD);
    const form = await browser.get('/dashboard/apps/new');
    await sessionEnds(f.developer.id);
    const sent = await browser.post('/dashboard/apps', { ...formFields(form.body, '/dashboard/apps'), name: 'Altered' });
    const draft = [...browser.cookies.keys()].find((name) => name.includes('form_draft'))!;
    const value = browser.cookies.get(draft)!;
    browser.cookies.set(draft, `${value.slice(0, -2)}${value.endsWith('A') ? 'B' : 'A'}A`);
    const { back } = await signInAgain(browser, sent.location(), f.developer.email);
    assert.equal(inputValue(back.body, 'name'), '');
  });

  it('tells a person whose session ended on the consent page what happened, and leads back to the request', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, PASSWORD);
    const url = authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'read_profile', state: 'kept-state', prompt: 'consent' });
    const consent = await browser.get(url);
    assert.equal(consent.status, 200);
    const fields = { ...formFields(consent.body, '/oauth2/authorize'), decision: 'allow' };
    await sessionEnds(f.user.id);
    const answered = await browser.post('/oauth2/authorize', fields);
    assert.equal(answered.status, 403);
    assert.match(answered.body, /nothing was shared/);
    const link = /href="(\/login\?return_to=[^"]+)"/.exec(answered.body)![1]!.replaceAll('&amp;', '&');
    const loginUrl = new URL(link, 'http://stride.test');
    const { back } = await signInAgain(browser, loginUrl, f.user.email);
    assert.equal(back.status, 200);
    assert.match(back.body, /wants to access/);
    assert.equal(formFields(back.body, '/oauth2/authorize').state, 'kept-state');
  });
});
