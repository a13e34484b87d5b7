/**
 * Test people on the pages (docs/web.md, "Test people"): they cannot sign in; the consent page of a
 * developer's own app lets the developer choose one of their test people, and no one can choose
 * anyone else's; "Connect a test person" starts the app's real request (PKCE verifier shown for a
 * public app); the dashboard's sandbox actions, refused for anyone else's test person.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { addTestPeople, TEST_PERSON_PASSWORD_HASH } from '../../src/domain/test-people.js';
import { setPassword } from '../../src/domain/users.js';
import { hashPassword } from '../../src/security/passwords.js';
import { ForeignTestPersonError } from '../../src/store/grants.js';
import type { App } from '../../src/store/apps.js';
import type { TestPerson } from '../../src/store/test-people.js';
import type { User } from '../../src/store/users.js';
import { LOGIN_FAILED_MESSAGE } from '../../src/web/pages/login.js';
import { authorizeUrl, Browser, checkboxScopes, createFixture, createOAuthTestApp, formFields, PROTECTED_PATH, REDIRECT_URI, signIn, tokenRequest, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { bearer } from '../support/tokens.js';
import { formPage, newAccount, PASSWORD, signedIn } from './pages-support.js';

cheapPasswordHashing();

const unescape = (value: string) => value.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"');

forEachDialect('test people on the pages', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let developer: Browser;
  let mine: TestPerson[];
  let otherDeveloper: User;
  let theirs: TestPerson[];
  let theirApp: App;

  before(async () => {
    t = await createOAuthTestApp(dialect, { SANDBOX_DAYS: '1' });
    f = await createFixture(t);
    developer = await signedIn(t, f.developer);
    // The dashboard's button, as the developer presses it; twice, as a double click sends it.
    const page = await formPage(developer, '/dashboard/test-people');
    assert.match(page.body, /You have no test people yet/);
    const form = formFields(page.body, '/dashboard/test-people');
    assert.ok(form.form_id);
    for (let send = 0; send < 2; send++) {
      const added = await developer.post('/dashboard/test-people', form);
      assert.equal(added.status, 303);
      assert.equal(added.location().pathname + added.location().search, '/dashboard/test-people?done=added');
    }
    mine = await t.database.stores.testPeople.listOf(f.developer.id);
    assert.equal(mine.length, 4, 'the same form sent again made no second four');
    // Two sends at once of another page's form: four more, each made by one of them.
    const again = formFields((await formPage(developer, '/dashboard/test-people')).body, '/dashboard/test-people');
    const both = await Promise.all([developer.post('/dashboard/test-people', again), developer.post('/dashboard/test-people', again)]);
    assert.deepEqual(both.map((response) => response.status), [303, 303]);
    const all = await t.database.stores.testPeople.listOf(f.developer.id);
    assert.equal(all.length, 8);
    for (const person of all.filter((one) => !mine.some((first) => first.id === one.id))) await t.database.stores.users.deleteAccount(person.id, t.clock());
    otherDeveloper = await newAccount(t, 'Other Developer');
    theirs = await addTestPeople(t.database.stores, otherDeveloper, t.clock(), { days: 1, coalesceSeconds: 0 });
    theirApp = (await registerApp(t.database.stores.apps, t.clock, otherDeveloper.id, { name: 'Their App', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false })).app;
  });
  after(() => t.close());

  const consentPage = (browser: Browser, app: App, extra: Record<string, string> = {}) =>
    browser.get(authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI, scope: app.scopes.join(' '), state: 'st', ...extra }));
  const chooserValues = (html: string) => [...html.matchAll(/name="consent_as" value="([^"]+)"/g)].map((m) => m[1]!);
  const grantOf = (userId: string, appId: string) => t.database.stores.grants.find(userId, appId);

  it('refuses every sign-in of a test person as it refuses a wrong password', async () => {
    const person = mine[0]!;
    const attempt = async (email: string, password: string) => {
      const response = await signIn(new Browser(t.app), email, password);
      return { status: response.status, message: response.body.includes(LOGIN_FAILED_MESSAGE), session: response.headers['set-cookie']?.toString().includes('stride_session=') ?? false };
    };
    const refused = { status: 401, message: true, session: false };
    for (const password of [PASSWORD, '', TEST_PERSON_PASSWORD_HASH]) assert.deepEqual(await attempt(person.email, password), refused);
    assert.deepEqual(await attempt(person.email.toUpperCase(), PASSWORD), refused);
    assert.deepEqual(await attempt(`nobody-${randomUUID().slice(0, 6)}@test-people.invalid`, PASSWORD), refused);
    // Even a real password hash written into the row lets no one in: the flag decides.
    await t.database.stores.users.changePassword(person.id, await hashPassword(PASSWORD), null, t.clock());
    assert.deepEqual(await attempt(person.email, PASSWORD), refused);
    await assert.rejects(setPassword(t.database.stores.users, t.clock, (await t.database.stores.users.findById(person.id))!, 'another good password'), /is a test person/);
  });

  it('offers the developer their own test people on their own app\'s consent page, and no one else any', async () => {
    const page = await consentPage(developer, f.app);
    assert.equal(page.status, 200);
    assert.deepEqual(chooserValues(page.body).sort(), [f.developer.id, ...mine.map((person) => person.id)].sort());
    assert.match(page.body, /Who answers\?/);
    // Another developer's app, and a real person on this app: no chooser.
    assert.deepEqual(chooserValues((await consentPage(developer, theirApp)).body), []);
    assert.deepEqual(chooserValues((await consentPage(await signedIn(t, f.user), f.app)).body), []);
  });

  it('issues the code for the test person chosen, which the app exchanges as any other', async () => {
    const person = mine[1]!;
    const page = await consentPage(developer, f.app);
    const decision = await developer.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: checkboxScopes(page.body), consent_as: person.id, decision: 'allow' });
    assert.equal(decision.status, 303);
    const back = decision.location();
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('state'), 'st');
    const exchange = await tokenRequest(t, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URI, client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(exchange.statusCode, 200, exchange.body);
    const me = await t.app.inject({ method: 'GET', url: PROTECTED_PATH, headers: bearer(exchange.json().access_token) });
    assert.equal(me.json().user_id, person.id);
    assert.equal(await grantOf(f.developer.id, f.app.id), undefined, 'the developer themselves gave nothing');
    // The test person's page says which app they have connected.
    assert.match((await formPage(developer, '/dashboard/test-people')).body, /Pace Coach<\/option>/);
  });

  it('refuses a forged choice: someone else\'s test person, or a test person for someone else\'s app', async () => {
    const forge = async (browser: Browser, app: App, consentAs: string) => {
      const page = await consentPage(browser, app);
      const response = await browser.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: app.scopes, consent_as: consentAs, decision: 'allow' });
      assert.equal(response.status, 403, response.body.slice(0, 300));
      assert.equal(response.headers.location, undefined);
      assert.equal(await grantOf(consentAs, app.id), undefined);
    };
    await forge(developer, f.app, theirs[0]!.id);
    await forge(await signedIn(t, otherDeveloper), theirApp, mine[2]!.id);
    await forge(developer, theirApp, mine[2]!.id);
    await forge(await signedIn(t, f.user), f.app, mine[2]!.id);
    await forge(developer, f.app, f.user.id);
    // No path around the page either: the store refuses such a grant.
    await assert.rejects(
      t.database.stores.grants.recordConsent(
        { userId: mine[2]!.id, appId: theirApp.id, newGrantId: randomUUID(), granted: ['read_profile'], issue: { code: { code_hash: randomUUID(), app_id: theirApp.id, user_id: mine[2]!.id, redirect_uri: REDIRECT_URI, scope: 'read_profile', code_challenge: null, code_challenge_method: null, expires_at: t.clock() + 60, consumed_at: null, created_at: t.clock(), requested_scope: null } }, now: t.clock() },
        () => ({ grantScope: 'read_profile', withdrawn: [] }),
      ),
      ForeignTestPersonError,
    );
    assert.equal(await grantOf(mine[2]!.id, theirApp.id), undefined);
  });

  it('answers consent_as with a NUL as it answers an unknown test person: refused, no grant', async () => {
    // PostgreSQL refuses a NUL in a text value: one that reached the lookup answered 500.
    for (const consentAs of ['\u0000', `${mine[0]!.id}\u0000`, randomUUID()]) {
      const page = await consentPage(developer, f.app);
      const response = await developer.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: f.app.scopes, consent_as: consentAs, decision: 'allow' });
      assert.equal(response.status, 403, `${JSON.stringify(consentAs)}: ${response.body.slice(0, 300)}`);
    }
  });

  it('starts a public app\'s real request with a PKCE verifier shown to the developer, who exchanges the code with it', async () => {
    const path = `/dashboard/apps/${encodeURIComponent(f.publicApp.clientId)}/connect-test-person`;
    const appPage = await developer.get(`/dashboard/apps/${encodeURIComponent(f.publicApp.clientId)}`);
    assert.match(appPage.body, new RegExp(`href="${path}"`));
    const page = await developer.get(path);
    assert.equal(page.status, 200);
    const verifier = /<code id="code-verifier" class="value">([^<]+)<\/code>/.exec(page.body)![1]!;
    const start = new URL(unescape(/id="start-connect" href="([^"]+)"/.exec(page.body)![1]!));
    assert.equal(start.searchParams.get('redirect_uri'), f.publicApp.redirectUris[0]);
    assert.equal(start.searchParams.get('scope'), f.publicApp.scopes.join(' '));
    assert.ok(start.searchParams.get('code_challenge') && start.searchParams.get('state'));
    const consent = await developer.get(start.pathname + start.search);
    const person = mine[3]!;
    const decision = await developer.post('/oauth2/authorize', { ...formFields(consent.body, '/oauth2/authorize'), granted_scope: checkboxScopes(consent.body), consent_as: person.id, decision: 'allow' });
    const back = decision.location();
    assert.equal(back.searchParams.get('state'), start.searchParams.get('state'));
    const exchange = await tokenRequest(t, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: f.publicApp.redirectUris[0]!, client_id: f.publicApp.clientId, code_verifier: verifier });
    assert.equal(exchange.statusCode, 200, exchange.body);
    assert.equal((await t.app.inject({ method: 'GET', url: PROTECTED_PATH, headers: bearer(exchange.json().access_token) })).json().user_id, person.id);
    // A confidential app's page has no verifier; another developer's app is not found.
    assert.doesNotMatch((await developer.get(`/dashboard/apps/${encodeURIComponent(f.app.clientId)}/connect-test-person`)).body, /code-verifier/);
    assert.equal((await developer.get(`/dashboard/apps/${encodeURIComponent(theirApp.clientId)}/connect-test-person`)).status, 404);
  });

  it('runs the sandbox\'s actions for the developer\'s own test people only, and says what is wrong with a field', async () => {
    const person = mine[1]!;
    const page = await formPage(developer, '/dashboard/test-people');
    const act = (id: string, action: string, fields: Record<string, string> = {}) =>
      developer.post(`/dashboard/test-people/${id}/${action}`, { ...formFields(page.body, `/dashboard/test-people/${mine[0]!.id}/sync`), ...fields });
    const outcome = (response: { status: number; location(): URL }) => (response.status === 303 ? response.location().searchParams.get('done') : response.status);
    t.clock.advance(3 * 3600);
    assert.equal(outcome(await act(person.id, 'sync')), 'synced');
    assert.equal(outcome(await act(person.id, 'sync')), 'synced-nothing');
    assert.equal(outcome(await act(person.id, 'late-sync')), 'late');
    const badZone = await act(person.id, 'time-zone', { timezone: 'Mars/Olympus' });
    assert.equal(badZone.status, 400);
    assert.match(badZone.body, /timezone must be an IANA time zone name/);
    assert.equal(outcome(await act(person.id, 'time-zone', { timezone: 'Asia/Tokyo' })), 'zone');
    assert.equal((await t.database.stores.users.findById(person.id))!.timezone, 'Asia/Tokyo');
    assert.equal((await act(person.id, 'revoke', { app_id: theirApp.id })).status, 400);
    assert.equal(outcome(await act(person.id, 'revoke', { app_id: f.app.id })), 'revoked');
    assert.equal(await grantOf(person.id, f.app.id), undefined);
    assert.equal(outcome(await act(person.id, 'revoke', { app_id: f.app.id })), 'not-connected');
    // Someone else's test person, no one, or no such action: not found, nothing done.
    const before = (await t.database.stores.testPeople.findOwned(otherDeveloper.id, theirs[0]!.id))!.syncedUntil;
    assert.equal((await act(theirs[0]!.id, 'sync')).status, 404);
    assert.equal((await t.database.stores.testPeople.findOwned(otherDeveloper.id, theirs[0]!.id))!.syncedUntil, before);
    assert.equal((await act(randomUUID(), 'sync')).status, 404);
    assert.equal((await act(person.id, 'explode')).status, 404);
    // Without the form's CSRF token, nothing.
    assert.equal((await developer.post(`/dashboard/test-people/${person.id}/sync`, {})).status, 403);
  });

  it('answers a sandbox action on an id with a NUL as on no such test person: 404, nothing done', async () => {
    const page = await formPage(developer, '/dashboard/test-people');
    const fields = formFields(page.body, `/dashboard/test-people/${mine[0]!.id}/sync`);
    const before = (await t.database.stores.testPeople.findOwned(f.developer.id, mine[0]!.id))!.syncedUntil;
    t.clock.advance(3600);
    // PostgreSQL refuses a NUL in a text value: one that reached the lookup answered 500.
    for (const id of ['%00', `${mine[0]!.id}%00`, 'a%00b', '%01']) {
      for (const action of ['sync', 'late-sync', 'revoke', 'time-zone']) {
        const response = await developer.post(`/dashboard/test-people/${id}/${action}`, { ...fields, app_id: f.app.id, timezone: 'UTC' });
        assert.equal(response.status, 404, `${id}/${action}: ${response.body.slice(0, 300)}`);
      }
    }
    assert.equal((await t.database.stores.testPeople.findOwned(f.developer.id, mine[0]!.id))!.syncedUntil, before);
  });

  it('adds at most 20 test people when eight add forms are sent at once (found November 2026: 32 on PostgreSQL)', async () => {
    const racer = await newAccount(t, 'Racing Developer');
    const browser = await signedIn(t, racer);
    // Eight pages, each with a form of its own, sent at once.
    const forms = [];
    for (let n = 0; n < 8; n++) forms.push(formFields((await formPage(browser, '/dashboard/test-people')).body, '/dashboard/test-people'));
    const answers = await Promise.all(forms.map((form) => browser.post('/dashboard/test-people', form)));
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [303, 303, 303, 303, 303, 409, 409, 409]);
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      assert.match(unescape(refused.body), /has 20 test people already; a developer can have at most 20/);
    }
    assert.equal((await t.database.stores.testPeople.listOf(racer.id)).length, 20);
  });
});
