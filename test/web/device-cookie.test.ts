/**
 * Device cookies and the per-email sign-in limit (OWASP "Slow Down Online Guessing Attacks with
 * Device Cookies"): failures from elsewhere lock an email for unknown browsers only; a browser that
 * signed in as that email before still signs in; failures presented with a device cookie lock that
 * cookie, not the email or the person's other browsers. Every attempt comes from an address of its
 * own (through the trusted proxy), so the per-address limit plays no part.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Browser, createOAuthTestApp, formFields } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { newAccount, PASSWORD } from './pages-support.js';

cheapPasswordHashing();

/** RATE_LIMIT_LOGIN_ACCOUNT below: attempts per email, and per device cookie. */
const LIMIT = 3;

forEachDialect('device cookies and the per-email sign-in limit', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN_ACCOUNT: `${LIMIT}/15min`, TRUST_PROXY: '127.0.0.1' });
  });
  after(() => t.close());

  let addresses = 0;
  /** One sign-in attempt in `browser` from an address no other request of this suite came from. */
  async function attempt(browser: Browser, email: string, password: string): Promise<number> {
    const fields = formFields((await browser.get('/login')).body, '/login');
    const response = await browser.post('/login', { ...fields, email, password }, { 'x-forwarded-for': `198.51.100.${++addresses}` });
    return response.status;
  }

  /** A browser that signed in as `email` (one attempt on the email's count) and signed out again. */
  async function knownBrowser(email: string): Promise<Browser> {
    const browser = new Browser(t.app);
    assert.equal(await attempt(browser, email, PASSWORD), 303);
    assert.ok(browser.cookies.get('stride_device'), 'the sign-in left a device cookie');
    const page = await browser.get('/account');
    assert.equal((await browser.post('/logout', formFields(page.body, '/logout'))).status, 303);
    return browser;
  }

  /** Strangers, each in a browser and from an address of their own, guess until the email is locked. */
  async function lockedByStrangers(email: string): Promise<void> {
    for (let i = 0; i <= LIMIT; i++) if ((await attempt(new Browser(t.app), email, 'a stranger\'s guess')) === 429) return;
    assert.fail('the email was never locked');
  }

  it('signs a person in on a browser they signed in on before, while failures from elsewhere lock the email', async () => {
    const person = await newAccount(t, 'Known');
    const home = await knownBrowser(person.email);
    const issued = home.cookies.get('stride_device');
    await lockedByStrangers(person.email);
    assert.equal(await attempt(new Browser(t.app), person.email, PASSWORD), 429, 'the email is locked');

    assert.equal(await attempt(home, person.email, PASSWORD), 303);
    assert.equal((await home.get('/account')).status, 200);
    assert.notEqual(home.cookies.get('stride_device'), issued, 'each sign-in issues a new device cookie');
    const line = [...home.setCookieHeaders].reverse().find((l) => l.startsWith('stride_device='))!;
    assert.match(line, /HttpOnly/i);
    assert.match(line, /SameSite=Lax/i);
  });

  it('keeps the email locked for unknown browsers, for an altered device cookie and for another email\'s', async () => {
    const person = await newAccount(t, 'Locked');
    const neighbour = await newAccount(t, 'Neighbour');
    const neighbours = await knownBrowser(neighbour.email);
    const altered = await knownBrowser(person.email);
    const cookie = altered.cookies.get('stride_device')!;
    altered.cookies.set('stride_device', (cookie.startsWith('A') ? 'B' : 'A') + cookie.slice(1));
    await lockedByStrangers(person.email);
    for (const [name, browser] of [['unknown', new Browser(t.app)], ['altered cookie', altered], ['another email\'s cookie', neighbours]] as const) {
      assert.equal(await attempt(browser, person.email, PASSWORD), 429, name);
    }
  });

  it('locks a device cookie used for failures, not the email or the person\'s other browsers', async () => {
    const person = await newAccount(t, 'Guarded');
    // Two first sign-ins: two of the email's attempts.
    const laptop = await knownBrowser(person.email);
    const phone = await knownBrowser(person.email);
    const statuses = [];
    for (let i = 0; i < LIMIT; i++) statuses.push(await attempt(laptop, person.email, 'someone at the laptop guessing'));
    statuses.push(await attempt(laptop, person.email, PASSWORD));
    assert.deepEqual(statuses, [...Array(LIMIT).fill(401), 429], 'the laptop\'s cookie is locked, right password or not');

    assert.equal(await attempt(phone, person.email, PASSWORD), 303, 'the phone signs in');
    // The laptop's failures were not the email's: an unknown browser has its third attempt left.
    assert.equal(await attempt(new Browser(t.app), person.email, PASSWORD), 303, 'an unknown browser signs in');
  });
});
