/**
 * A person's own data and sign-ins on the account page: the export holds everything and only
 * theirs, sessions can be seen and ended (only their own), a password change ends the other
 * sessions, and deleting the account removes everything, tells the apps and frees the email.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createAccountIfFree } from '../../src/domain/users.js';
import { Browser, createFixture, createOAuthTestApp, formFields, REDIRECT_URI, signIn, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { grantThroughConsent, newAccount, PASSWORD, profileStatus, signedIn, textOf } from './pages-support.js';
import { eventRows } from '../support/events.js';

cheapPasswordHashing();

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0';

forEachDialect('your data and sessions', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  /** Signs `email` in, sending `userAgent` with every request of the sign-in. */
  const signedInWith = async (email: string, userAgent: string) => {
    const browser = new Browser(t.app);
    const original = browser.request.bind(browser);
    browser.request = (method, url, form, headers = {}) => original(method, url, form, { 'user-agent': userAgent, ...headers });
    assert.equal((await signIn(browser, email, PASSWORD)).status, 303);
    return browser;
  };
  const postFrom = async (browser: Browser, action: string, fields: Record<string, string> = {}) => {
    const page = await browser.get('/account');
    return browser.post(action, { ...formFields(page.body, action), ...fields });
  };
  const minutes = (start: number, count: number, value: (i: number) => number) => Array.from({ length: count }, (_, i) => ({ start_time: start + 60 * i, value: value(i) }));

  it('exports everything about the person, and nothing about anyone else', async () => {
    const person = await newAccount(t, 'Exporter');
    const other = await newAccount(t, 'Other');
    const browser = await signedIn(t, person);
    await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI);
    const change = { ranges: [], dates: [], now: t.clock(), coalesceSeconds: 30 };
    await t.database.stores.steps.upsertSamples(person.id, minutes(1_700_000_040, 25_000, (i) => i % 97), change);
    await t.database.stores.steps.upsertSamples(other.id, minutes(1_700_000_040, 10, () => 999), change);
    await t.database.stores.users.updateProfile(person.id, { birth_year: 1991, max_heart_rate: 186 }, t.clock());

    const json = await browser.get('/account/export.json');
    assert.equal(json.status, 200);
    assert.match(String(json.headers['content-disposition']), /^attachment; filename="stride-export.json"$/);
    assert.equal(json.headers['cache-control'], 'no-store');
    const data = json.json();
    assert.equal(data.email, person.email);
    assert.equal(data.profile.display_name, 'Exporter');
    assert.deepEqual([data.profile.birth_year, data.profile.max_heart_rate], [1991, 186]);
    assert.deepEqual(data.connected_apps.map((c: { app: string }) => c.app), ['Pace Coach']);
    assert.equal(data.sessions.length, 1);
    assert.equal(data.steps.length, 25_000, 'every sample, across the pages the export reads');
    assert.deepEqual(data.steps[24_999], { start_time: 1_700_000_040 + 60 * 24_999, value: 24_999 % 97 });
    assert.ok(data.steps.every((s: { value: number }) => s.value !== 999), 'nothing of another person');

    const csv = await browser.get('/account/export/steps.csv');
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const lines = csv.body.trimEnd().split('\n');
    assert.equal(lines[0], 'start_time,value');
    assert.equal(lines.length, 25_001);
    assert.equal(lines[1], `1700000040,0`);

    const visitor = await new Browser(t.app).get('/account/export.json');
    assert.equal(visitor.status, 302, 'signed out: to the sign-in page');
  });

  it('lists the sessions with browser, address and last use, and ends only the person\'s own', async () => {
    const person = await newAccount(t, 'Traveller');
    const here = await signedInWith(person.email, CHROME);
    const there = await signedInWith(person.email, FIREFOX);
    const page = await here.get('/account');
    assert.match(page.body, /Chrome on Linux <span class="meta">\(this browser\)<\/span>/);
    assert.match(page.body, /Firefox on Windows/);
    const thereId = /name="session" value="([^"]+)"/.exec(page.body)![1]!;

    // Someone else cannot end it, even knowing its id; the person can.
    const stranger = await signedIn(t, await newAccount(t, 'Stranger'));
    const strangerTry = await stranger.post('/account/sessions/end', { ...formFields((await stranger.get('/account')).body, '/account/password'), session: thereId });
    assert.equal(strangerTry.status, 303);
    assert.equal((await there.get('/account')).status, 200, 'still signed in there');
    const ended = await postFrom(here, '/account/sessions/end', { session: thereId });
    assert.equal(ended.location().searchParams.get('sessions'), 'ended');
    assert.equal((await there.get('/account')).status, 302, 'signed out there');
    assert.equal((await here.get('/account')).status, 200, 'still signed in here');

    const third = await signedInWith(person.email, FIREFOX);
    await postFrom(here, '/account/sessions/end-others');
    assert.equal((await third.get('/account')).status, 302);
    assert.equal((await here.get('/account')).status, 200);
  });

  it('ends no session for a session id with a NUL, as for one that names none', async () => {
    // PostgreSQL refuses a NUL in a text value: an id with one that reached the statement answered 500.
    const person = await newAccount(t, 'Careful');
    const here = await signedIn(t, person);
    // The only session shows no End button: the CSRF token of another form of the page.
    const fields = formFields((await here.get('/account')).body, '/account/password');
    for (const session of ['\u0000', `${'0'.repeat(63)}\u0000`, '0'.repeat(64)]) {
      const response = await here.post('/account/sessions/end', { ...fields, session });
      assert.equal(response.status, 303, `${JSON.stringify(session)}: ${response.body.slice(0, 300)}`);
      assert.equal(response.location().searchParams.get('sessions'), 'none');
    }
    assert.equal((await here.get('/account')).status, 200, 'still signed in');
  });

  it('changes the password after checking the current one; every other session ends', async () => {
    const person = await newAccount(t, 'Changer');
    const here = await signedInWith(person.email, CHROME);
    const there = await signedInWith(person.email, FIREFOX);
    const wrong = await postFrom(here, '/account/password', { current_password: 'not my password', new_password: 'a brand new password' });
    assert.equal(wrong.location().searchParams.get('password'), 'wrong-current');
    const short = await postFrom(here, '/account/password', { current_password: PASSWORD, new_password: 'short' });
    assert.equal(short.location().searchParams.get('password'), 'bad-new');
    assert.equal((await there.get('/account')).status, 200, 'nothing changed yet');

    const changed = await postFrom(here, '/account/password', { current_password: PASSWORD, new_password: 'a brand new password' });
    assert.equal(changed.location().searchParams.get('password'), 'changed');
    assert.match(textOf((await here.get('/account?password=changed')).body, 'notice')!, /Every other session is signed out/);
    assert.equal((await there.get('/account')).status, 302);
    assert.equal((await signIn(new Browser(t.app), person.email, PASSWORD)).status, 401, 'the old password no longer signs in');
    assert.equal((await signIn(new Browser(t.app), person.email, 'a brand new password')).status, 303);
  });

  it('deletes the account after the password: the data goes, apps are told, the email is free', async () => {
    const person = await newAccount(t, 'Leaver');
    const browser = await signedIn(t, person);
    const tokens = await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI);
    await t.database.stores.steps.upsertSamples(person.id, minutes(1_700_000_040, 30, () => 5), { ranges: [], dates: [], now: t.clock(), coalesceSeconds: 30 });

    const wrong = await postFrom(browser, '/account/delete', { password: 'not my password' });
    assert.equal(wrong.location().searchParams.get('delete'), 'wrong-password');
    assert.ok(await t.database.stores.users.findById(person.id));

    const deleted = await postFrom(browser, '/account/delete', { password: PASSWORD });
    assert.equal(deleted.location().pathname, '/account/deleted');
    assert.match((await browser.get('/account/deleted')).body, /Your account is deleted/);
    assert.equal((await browser.get('/account')).status, 302, 'signed out');
    assert.equal(await t.database.stores.users.findById(person.id), undefined);
    const db = t.database.db.kysely;
    for (const table of ['series_days', 'sessions', 'grants', 'access_tokens', 'refresh_tokens'] as const) {
      assert.equal((await db.selectFrom(table).select('user_id').where('user_id', '=', person.id).execute()).length, 0, table);
    }
    assert.equal(await profileStatus(t, tokens.access_token), 401);
    const told = await eventRows(db, { userId: person.id, type: 'grant.revoked' });
    assert.equal(told.length, 1);
    assert.equal(JSON.parse(told[0]!.data).reason, 'account_deleted');
    assert.ok(await createAccountIfFree(t.database.stores.users, t.clock, { email: person.email, password: PASSWORD, displayName: 'Again' }), 'the email is free again');
  });

  it('keeps the account of a developer until their apps are deleted', async () => {
    const developer = await signedIn(t, f.developer);
    const refused = await postFrom(developer, '/account/delete', { password: PASSWORD });
    assert.equal(refused.location().searchParams.get('delete'), 'owns-apps');
    assert.ok(await t.database.stores.users.findById(f.developer.id));
  });

  it('shows each outcome next to the field it is about, or in its own section, on a page laid out in sections', async () => {
    const person = await newAccount(t, 'Reader');
    const browser = await signedIn(t, person);
    /** The id of the section the element with `id` is in. */
    const sectionOf = (html: string, id: string) => {
      const at = html.indexOf(`id="${id}"`);
      assert.ok(at >= 0, `no #${id}`);
      return [...html.slice(0, at).matchAll(/<section aria-labelledby="([^"]+)"/g)].pop()?.[1];
    };
    const wrong = await browser.get('/account?password=wrong-current');
    assert.match(textOf(wrong.body, 'current_password-error')!, /not your current password/);
    assert.match(wrong.body, /id="current_password"[^>]*aria-invalid="true" aria-describedby="current_password-error"/);
    assert.equal(textOf(wrong.body, 'notice'), undefined, 'no notice far from the field');
    assert.match(textOf((await browser.get('/account?password=bad-new')).body, 'new_password-error')!, /from 8 to/);
    assert.match(textOf((await browser.get('/account?delete=wrong-password')).body, 'delete_password-error')!, /password was not right/);
    const ownsApps = await browser.get('/account?delete=owns-apps');
    assert.match(textOf(ownsApps.body, 'delete-error')!, /Delete them on the dashboard first/);
    assert.equal(sectionOf(ownsApps.body, 'delete-error'), 'delete-heading');
    const changed = await browser.get('/account?password=changed');
    assert.equal(sectionOf(changed.body, 'notice'), 'password-heading');
    assert.equal(sectionOf((await browser.get('/account?sessions=ended')).body, 'notice'), 'sessions-heading');
    assert.equal(sectionOf((await browser.get('/account?saved=profile')).body, 'notice'), 'profile-heading');
    // Sections that a wide screen shows in two columns (stride.css), "Bring your Fitbit history" among them.
    assert.match(changed.body, /<main id="main" class="wide">/);
    assert.equal([...changed.body.matchAll(/<section [^>]*class="account-section/g)].length, 7);
    // A word the page does not know shows nothing.
    assert.equal(textOf((await browser.get('/account?password=toString&delete=constructor')).body, 'notice'), undefined);
  });

  it('refuses each form without its CSRF token, changing nothing', async () => {
    const person = await newAccount(t, 'Guarded');
    const browser = await signedIn(t, person);
    for (const [action, fields] of [
      ['/account/sessions/end-others', {}],
      ['/account/password', { current_password: PASSWORD, new_password: 'forged new password' }],
      ['/account/delete', { password: PASSWORD }],
    ] as const) {
      const response = await browser.post(action, { ...fields, csrf_token: 'forged' });
      assert.equal(response.status, 403, action);
    }
    assert.ok(await t.database.stores.users.findById(person.id));
    assert.equal((await signIn(new Browser(t.app), person.email, PASSWORD)).status, 303);
  });
});

it('counts password attempts on the account page against the sign-in limit per address', async () => {
  const t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '3/min' });
  try {
    const browser = await signedIn(t, await newAccount(t, 'Guessed')); // one attempt: the sign-in
    const statuses = [];
    for (const guess of ['guess one', 'guess two', 'guess three']) {
      const page = await browser.get('/account');
      statuses.push((await browser.post('/account/password', { ...formFields(page.body, '/account/password'), current_password: guess, new_password: 'whatever it is' })).status);
    }
    assert.deepEqual(statuses, [303, 303, 429]);
  } finally {
    await t.close();
  }
});
