/**
 * The password checks of the account pages (changing the password, deleting the account) with a
 * stolen session: counted per account whatever the address, and the session that spends the
 * account's last check with a wrong answer ends. Every request comes from an address of its own
 * (through the trusted proxy), so the per-address limit plays no part.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Browser, createOAuthTestApp, formFields, type Response } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { newAccount, PASSWORD } from './pages-support.js';

cheapPasswordHashing();

/** RATE_LIMIT_PASSWORD_CHECK's default: five checks per account in 15 minutes. */
const CHECKS = 5;

forEachDialect('password checks on the account pages', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', TRUST_PROXY: '127.0.0.1' });
  });
  after(() => t.close());

  let addresses = 0;
  /** A client address no other request of this suite came from. */
  const fresh = () => ({ 'x-forwarded-for': `203.0.113.${++addresses}` });

  async function signedIn(email: string, password = PASSWORD): Promise<Browser> {
    const browser = new Browser(t.app);
    const fields = formFields((await browser.get('/login')).body, '/login');
    const response = await browser.post('/login', { ...fields, email, password }, fresh());
    assert.equal(response.status, 303, `sign-in as ${email}`);
    return browser;
  }

  /** What a thief holding `victim`'s session cookie has: the cookie, and the page's CSRF tokens. */
  async function steal(victim: Browser): Promise<{ cookie: string; page: string }> {
    const cookie = victim.cookies.get('stride_session')!;
    const thief = new Browser(t.app);
    thief.cookies.set('stride_session', cookie);
    const page = await thief.get('/account');
    assert.equal(page.status, 200);
    return { cookie, page: page.body };
  }

  /** Posts the account page's form `action` with the stolen cookie, from a fresh address. */
  function send(stolen: { cookie: string; page: string }, action: string, fields: Record<string, string>): Promise<Response> {
    const thief = new Browser(t.app);
    thief.cookies.set('stride_session', stolen.cookie);
    return thief.post(action, { ...formFields(stolen.page, action), ...fields }, fresh());
  }

  const changePassword = (stolen: { cookie: string; page: string }, current: string) =>
    send(stolen, '/account/password', { current_password: current, new_password: 'the thief\'s own password' });
  const deleteAccount = (stolen: { cookie: string; page: string }, password: string) => send(stolen, '/account/delete', { password });

  /** Where an answer sends the browser: the account page's outcome word, or the sign-in page's. */
  const outcome = (response: Response) => {
    const location = response.location();
    return location.pathname === '/login' ? `signed out: ${location.searchParams.get('signed_out')}` : location.searchParams.get('password') ?? location.searchParams.get('delete');
  };

  it('ends a stolen session after five wrong current passwords from five addresses; the right one then changes nothing', async () => {
    const person = await newAccount(t, 'Robbed');
    const stolen = await steal(await signedIn(person.email));
    const answers = [];
    for (let guess = 1; guess <= CHECKS; guess++) answers.push(outcome(await changePassword(stolen, `guess ${guess}`)));
    assert.deepEqual(answers, [...Array(CHECKS - 1).fill('wrong-current'), 'signed out: password']);

    // The thief keeps the cookie and the form whatever the answer said: the session is gone on the server.
    const right = await changePassword(stolen, PASSWORD);
    assert.equal(right.location().pathname, '/login');
    const thief = new Browser(t.app);
    thief.cookies.set('stride_session', stolen.cookie);
    assert.equal((await thief.get('/account')).location().pathname, '/login');
    assert.equal((await deleteAccount(stolen, PASSWORD)).location().pathname, '/login');
    assert.ok(await t.database.stores.users.findById(person.id), 'the account is kept');
    await signedIn(person.email); // the password is still the person's own
    const page = await new Browser(t.app).get('/login?signed_out=password');
    assert.match(page.body, /You are signed out: your current password was not right too many times/);
  });

  it('counts password changes and account deletion against one budget', async () => {
    const person = await newAccount(t, 'Shared');
    const stolen = await steal(await signedIn(person.email));
    const answers = [];
    for (let guess = 1; guess <= CHECKS; guess++) {
      const response = guess % 2 === 1 ? await changePassword(stolen, `guess ${guess}`) : await deleteAccount(stolen, `guess ${guess}`);
      answers.push(outcome(response));
    }
    assert.deepEqual(answers, ['wrong-current', 'wrong-password', 'wrong-current', 'wrong-password', 'signed out: password']);
    assert.ok(await t.database.stores.users.findById(person.id));
  });

  it('counts per account whatever the session: beyond five no session gets an answer, other accounts are untouched', async () => {
    const person = await newAccount(t, 'Twice');
    const first = await steal(await signedIn(person.email));
    const second = await steal(await signedIn(person.email));
    const own = await steal(await signedIn(person.email));
    const answers = [];
    for (let guess = 1; guess < CHECKS; guess++) answers.push(outcome(await changePassword(first, `guess ${guess}`)));
    answers.push(outcome(await deleteAccount(second, 'one more guess')));
    assert.deepEqual(answers, [...Array(CHECKS - 1).fill('wrong-current'), 'signed out: password']);

    // Spent for the window: even the right password is not checked, from a session still signed in.
    const refused = await changePassword(own, PASSWORD);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal((await deleteAccount(own, PASSWORD)).status, 429);
    assert.ok(await t.database.stores.users.findById(person.id));
    const stillIn = new Browser(t.app);
    stillIn.cookies.set('stride_session', own.cookie);
    assert.equal((await stillIn.get('/account')).status, 200, 'a session that sent no wrong answer stays signed in');

    const neighbour = await newAccount(t, 'Neighbour');
    const theirs = await steal(await signedIn(neighbour.email));
    assert.equal(outcome(await changePassword(theirs, PASSWORD)), 'changed', 'another account has its own budget');
  });
});
