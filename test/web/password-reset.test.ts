/**
 * A way back into an account whose password is forgotten: the operator's single-use link (the one
 * `stride users reset-link` prints) opens a page that sets a new password, ends every session of
 * the account, and then no longer works; after an hour it says it expired.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createResetLink } from '../../src/domain/password-resets.js';
import { Browser, createOAuthTestApp, formFields, signIn } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { newAccount, PASSWORD, signedIn, textOf } from './pages-support.js';

cheapPasswordHashing();

forEachDialect('password reset link', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp(dialect);
  });
  after(() => t.close());

  const linkFor = async (user: Awaited<ReturnType<typeof newAccount>>) => {
    const { url } = await createResetLink(t.database.stores.passwordResets, t.clock, t.app.ctx.config.publicUrl, user);
    const link = new URL(url);
    return link.pathname + link.search;
  };
  /** Opens the link in a fresh browser and sends its form with `password`. */
  const useLink = async (path: string, password: string) => {
    const browser = new Browser(t.app);
    const page = await browser.get(path);
    if (page.status !== 200) return page;
    return browser.post('/password-reset', { ...formFields(page.body, '/password-reset'), password });
  };

  it('sets a new password once, ends every session of the account, and refuses a second use', async () => {
    const user = await newAccount(t);
    const elsewhere = await signedIn(t, user);
    assert.equal((await elsewhere.get('/account')).status, 200);
    const path = await linkFor(user);
    assert.match(path, /^\/password-reset\?token=spw_/);

    const page = await new Browser(t.app).get(path);
    assert.equal(page.status, 200);
    assert.match(page.body, new RegExp(user.email.replace('.', '\\.')));
    assert.equal(page.headers['referrer-policy'], 'no-referrer');

    const short = await useLink(path, 'short');
    assert.equal(short.status, 400, 'the password is checked as at sign-up');
    assert.match(textOf(short.body, 'form-error') ?? '', /at least 8/);

    const set = await useLink(path, 'a brand new passphrase');
    assert.equal(set.status, 303);
    assert.equal(set.location().pathname, '/login');
    assert.equal((await elsewhere.get('/account')).status, 302, 'the session signed in before has ended');

    const fresh = new Browser(t.app);
    assert.equal((await signIn(fresh, user.email, PASSWORD)).status, 401, 'the old password no longer works');
    assert.equal((await signIn(fresh, user.email, 'a brand new passphrase')).status, 303);

    const again = await useLink(path, 'yet another passphrase');
    assert.equal(again.status, 410);
    assert.match(again.body, /already used/);
    assert.equal((await signIn(new Browser(t.app), user.email, 'a brand new passphrase')).status, 303, 'the second use changed nothing');
  });

  it('says a link has expired after one hour, and one never made is not valid', async () => {
    const user = await newAccount(t);
    const path = await linkFor(user);
    t.clock.advance(3599);
    assert.equal((await new Browser(t.app).get(path)).status, 200, 'still usable just before the hour');
    t.clock.advance(1);
    const expired = await useLink(path, 'a brand new passphrase');
    assert.equal(expired.status, 410);
    assert.match(expired.body, /expired/);
    assert.equal((await signIn(new Browser(t.app), user.email, PASSWORD)).status, 303, 'the password did not change');

    const unknown = await new Browser(t.app).get('/password-reset?token=spw_never_made');
    assert.equal(unknown.status, 404);
  });

  it('tells the person on the sign-in page whom to ask', async () => {
    const page = await new Browser(t.app).get('/login');
    assert.match(textOf(page.body, 'forgot') ?? '', /Forgot your password\? Ask whoever runs this Stride server/);
  });
});
