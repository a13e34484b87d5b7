/**
 * A form sent after the session ended: the person signs in again and is back on the form with what
 * they typed, to send it again themselves with a fresh CSRF token; consent says what happened and
 * leads back to the request. Nothing is done on their behalf, and nothing is lost. What they typed
 * is theirs alone: it reaches no one else who signs in on the browser, and nothing another site
 * sends becomes a draft.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { hashCredential } from '../../src/security/secrets.js';
import { authorizeUrl, Browser, createFixture, createOAuthTestApp, formFields, REDIRECT_URI, signIn, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { formPage, newAccount, PASSWORD, signedIn, textOf } from './pages-support.js';

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

  /** The session of a signed-in browser expires; the browser still sends its cookie, which outlives it. */
  const sessionEnds = async (browser: Browser) => {
    const idHash = hashCredential(browser.cookies.get('stride_session')!);
    await t.database.db.kysely.updateTable('sessions').set({ expires_at: t.clock() - 1 }).where('id_hash', '=', idHash).execute();
  };

  const hasDraftCookie = (browser: Browser) => [...browser.cookies.keys()].some((name) => name.includes('form_draft'));

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
    const form = await formPage(browser, '/dashboard/apps/new');
    const fields: Record<string, string | string[]> = { ...formFields(form.body, '/dashboard/apps'), name: 'Typed Before Expiry', description: 'Kept <b>as typed</b>', redirect_uris: 'https://typed.example/cb', scopes: ['read_profile', 'read_activity'], client_type: 'confidential' };
    await sessionEnds(browser);

    const sent = await browser.post('/dashboard/apps', fields);
    assert.equal(sent.status, 303);
    const loginUrl = sent.location();
    assert.equal(loginUrl.pathname, '/login');
    assert.equal(loginUrl.searchParams.get('return_to'), form.url, "back to the form's own page");
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').where('name', '=', 'Typed Before Expiry').execute()).length, 0);

    const { login, back } = await signInAgain(browser, loginUrl, f.developer.email);
    assert.match(textOf(login.body, 'notice')!, /what you typed/);
    assert.equal(back.status, 200);
    assert.match(textOf(back.body, 'notice')!, /What you typed is back/);
    const refilled = formFields(back.body, '/dashboard/apps');
    assert.equal(inputValue(back.body, 'name'), 'Typed Before Expiry');
    assert.equal(refilled.form_id, fields.form_id, 'the same form, so sending it twice still makes one app');
    assert.notEqual(refilled.csrf_token, fields.csrf_token, 'a fresh CSRF token for the new session');
    assert.match(back.body, /Kept &lt;b&gt;as typed&lt;\/b&gt;/);
    assert.match(back.body, /https:\/\/typed.example\/cb/);

    // Sent again by the person: registered once; a reload of the form no longer has the draft.
    const registered = await browser.post('/dashboard/apps', { ...fields, csrf_token: refilled.csrf_token! });
    assert.equal(registered.status, 303);
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').where('name', '=', 'Typed Before Expiry').execute()).length, 1);
    assert.equal(inputValue((await browser.get(form.url)).body, 'name'), '');
  });

  it('brings a person back to their profile form with what they typed', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, PASSWORD);
    const page = await browser.get('/account');
    const fields = { ...formFields(page.body, '/account/profile'), display_name: 'Renamed Late', daily_step_goal: '12345' };
    await sessionEnds(browser);
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
    const list = await formPage(browser, listPath);
    const fields: Record<string, string | string[]> = { ...formFields(list.body, listPath), url: 'https://hooks.example/typed', events: ['grant.revoked'] };
    await sessionEnds(browser);
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
    const form = await formPage(browser, '/dashboard/apps/new');
    await sessionEnds(browser);
    const sent = await browser.post('/dashboard/apps', { ...formFields(form.body, '/dashboard/apps'), name: 'Altered' });
    const draft = [...browser.cookies.keys()].find((name) => name.includes('form_draft'))!;
    // One bit of the sealed text flipped (rewriting base64 characters at the end can leave the bytes as they were).
    const bytes = Buffer.from(browser.cookies.get(draft)!, 'base64url');
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
    browser.cookies.set(draft, bytes.toString('base64url'));
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
    await sessionEnds(browser);
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

  /** What the profile form shows, as its Save button would send it. */
  const profileAsShown = (html: string) => ({
    ...formFields(html, '/account/profile'),
    ...Object.fromEntries(['display_name', 'timezone', 'daily_step_goal', 'stride_length_cm'].map((name) => [name, inputValue(html, name) ?? ''])),
  });

  it('restores a draft to no one but its person: someone else signing in on the browser sees, and saves, their own profile', async () => {
    const other = await newAccount(t, 'Bea');
    const browser = new Browser(t.app);
    await signIn(browser, f.user.email, PASSWORD);
    const page = await browser.get('/account');
    await sessionEnds(browser);
    const sent = await browser.post('/account/profile', { ...profileAsShown(page.body), display_name: 'Private Walker', timezone: 'Pacific/Chatham', daily_step_goal: '23456' });
    assert.equal(sent.location().searchParams.get('ended'), 'kept', 'kept for the person whose session ended');

    const { back } = await signInAgain(browser, sent.location(), other.email);
    assert.equal(back.status, 200);
    assert.doesNotMatch(back.body, /What you typed is back/);
    assert.equal(inputValue(back.body, 'display_name'), 'Bea');
    assert.notEqual(inputValue(back.body, 'timezone'), 'Pacific/Chatham');
    const saved = await browser.post('/account/profile', profileAsShown(back.body));
    assert.equal(saved.status, 303);
    const bea = await t.database.stores.users.findByEmail(other.email);
    assert.deepEqual([bea?.display_name, bea?.timezone, bea?.daily_step_goal], ['Bea', other.timezone, other.daily_step_goal]);
  });

  it('drops a draft when someone else signs in on the browser: its person does not get it back afterwards either', async () => {
    const other = await newAccount(t, 'Bo');
    const browser = new Browser(t.app);
    await signIn(browser, f.developer.email, PASSWORD);
    const form = await formPage(browser, '/dashboard/apps/new');
    await sessionEnds(browser);
    const sent = await browser.post('/dashboard/apps', { ...formFields(form.body, '/dashboard/apps'), name: 'Private Draft', redirect_uris: 'https://private.example/cb', scopes: ['read_profile'] });
    assert.equal(sent.location().searchParams.get('ended'), 'kept');

    // Bo signs in and out without opening a form page; then the developer signs in again.
    assert.equal((await signIn(browser, other.email, PASSWORD)).status, 303);
    const list = await browser.get('/dashboard');
    assert.equal((await browser.post('/logout', formFields(list.body, '/logout'))).status, 303);
    assert.equal((await signIn(browser, f.developer.email, PASSWORD, form.url)).status, 303);
    const again = await browser.get(form.url);
    assert.equal(again.status, 200);
    assert.equal(inputValue(again.body, 'name'), '');
    assert.doesNotMatch(again.body, /private\.example|What you typed is back/);
  });

  it('keeps nothing from another site: its POST carries no session cookie, and the signed-in developer sees only their app\'s own settings', async () => {
    const victim = await signedIn(t, f.developer);
    const appPath = `/dashboard/apps/${f.app.clientId}`;
    // A form on another site posted by the victim's browser: SameSite=Lax keeps Stride's cookies off it.
    const crossSite = new Browser(t.app);
    const planted = await crossSite.post(appPath, { name: 'Pace Coach', redirect_uris: `${REDIRECT_URI}\nhttps://attacker.example/cb`, scopes: ['read_profile'], csrf_token: 'none' });
    assert.equal(planted.status, 303);
    assert.equal(planted.location().pathname, '/login');
    assert.notEqual(planted.location().searchParams.get('ended'), 'kept');
    assert.equal(hasDraftCookie(crossSite), false, 'no draft cookie set');

    // Whatever that answer set lands in the victim's browser, which follows the redirect, signed in.
    for (const [name, value] of crossSite.cookies) victim.cookies.set(name, value);
    const login = await victim.get(planted.location().pathname + planted.location().search);
    assert.equal(login.status, 302);
    const settings = await victim.get(login.location().pathname);
    assert.equal(settings.status, 200);
    assert.doesNotMatch(settings.body, /attacker\.example|What you typed is back/);
  });

  it('keeps nothing when a form comes with the ended session\'s cookie but another session\'s CSRF token', async () => {
    const browser = new Browser(t.app);
    await signIn(browser, f.developer.email, PASSWORD);
    const form = await browser.get(`/dashboard/apps/${f.app.clientId}`);
    await sessionEnds(browser);
    // A valid token, but of someone else's session, as a page on a sibling host could get one.
    const someoneElse = await signedIn(t, await newAccount(t, 'Sibling'));
    const theirToken = formFields((await someoneElse.get('/account')).body, '/account/profile').csrf_token!;
    const sent = await browser.post(`/dashboard/apps/${f.app.clientId}`, { ...formFields(form.body, `/dashboard/apps/${f.app.clientId}`), csrf_token: theirToken, name: 'Pace Coach', redirect_uris: 'https://sibling.example/cb', scopes: ['read_profile'] });
    assert.equal(sent.location().searchParams.get('ended'), '1');
    assert.equal(hasDraftCookie(browser), false);
  });

  it('keeps nothing for a session ended on purpose (signed out elsewhere) or more than a day ago', async () => {
    for (const end of [
      (idHash: string) => t.database.db.kysely.deleteFrom('sessions').where('id_hash', '=', idHash).execute(),
      (idHash: string) => t.database.db.kysely.updateTable('sessions').set({ expires_at: t.clock() - 86401 }).where('id_hash', '=', idHash).execute(),
    ]) {
      const browser = new Browser(t.app);
      await signIn(browser, f.user.email, PASSWORD);
      const page = await browser.get('/account');
      await end(hashCredential(browser.cookies.get('stride_session')!));
      const sent = await browser.post('/account/profile', { ...profileAsShown(page.body), display_name: 'Too Late' });
      assert.equal(sent.location().searchParams.get('ended'), '1');
      assert.equal(hasDraftCookie(browser), false);
    }
  });
});
