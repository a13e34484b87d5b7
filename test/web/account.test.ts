/** The account page: profile with the API's rules, connected apps and revocation; layout and assets. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { Browser, createFixture, createOAuthTestApp, formFields, OTHER_REDIRECT_URI, REDIRECT_URI, refresh, type Fixture } from '../oauth/flow.js';
import { formPage, grantThroughConsent, newAccount, profileStatus, signedIn, submit, textOf } from './pages-support.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { pageWith } from '../support/feed.js';

cheapPasswordHashing();

forEachDialect('account page', (dialect) => {
  let t: TestApp;
  let f: Fixture;

  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('sends signed-out visitors to sign in, and / to the account page', async () => {
    const visitor = new Browser(t.app);
    const page = await visitor.get('/account');
    assert.equal(page.status, 302);
    assert.equal(page.location().pathname, '/login');
    assert.equal(page.location().searchParams.get('return_to'), '/account');
    assert.equal((await visitor.get('/')).location().pathname, '/account');
    for (const action of ['/account/profile', `/account/connected-apps/${f.app.id}/revoke`]) {
      const post = await visitor.post(action, {});
      assert.equal(post.status, 303, action);
      assert.equal(post.location().pathname, '/login');
    }
  });

  it('lands on /account after signing in, with navigation to Dashboard, Account and Sign out', async () => {
    const browser = new Browser(t.app);
    const login = await browser.get('/login');
    const signedInResponse = await browser.post('/login', { ...formFields(login.body, '/login'), email: f.user.email, password: f.password });
    assert.equal(signedInResponse.location().pathname, '/account');
    const page = await browser.get('/account');
    assert.equal(page.status, 200);
    assert.match(page.body, /<a href="\/dashboard">Dashboard<\/a>/);
    assert.match(page.body, /<a href="\/account" aria-current="page">Account<\/a>/);
    assert.match(page.body, /action="\/logout"/);
    assert.match(page.body, /No app has access to your account/);
  });

  it('saves the profile with the API rules', async () => {
    const user = await newAccount(t, 'Profile Person');
    const browser = await signedIn(t, user);
    const saved = await submit(browser, '/account', '/account/profile', {
      display_name: '  Pat Walker ', timezone: 'europe/berlin', daily_step_goal: '12000', stride_length_cm: '74',
    });
    assert.equal(saved.status, 303);
    assert.equal(saved.location().search, '?saved=profile');
    const stored = await t.database.stores.users.findById(user.id);
    assert.equal(stored?.display_name, 'Pat Walker');
    assert.equal(stored?.timezone, 'Europe/Berlin');
    assert.equal(Number(stored?.daily_step_goal), 12000);
    assert.equal(Number(stored?.stride_length_cm), 74);
    const page = await browser.get('/account?saved=profile');
    assert.match(page.body, /Your profile is saved/);
    assert.match(page.body, /value="Europe\/Berlin"/);

    // A second stride change within the minute is refused with the form kept and a reason.
    const tooSoon = await submit(browser, '/account', '/account/profile', { display_name: 'Pat', timezone: 'UTC', daily_step_goal: '0', stride_length_cm: '' });
    assert.equal(tooSoon.status, 429);
    assert.match(tooSoon.body, /You changed your stride length a moment ago; you can change it again in 60 seconds/);
    assert.equal(Number((await t.database.stores.users.findById(user.id))?.stride_length_cm), 74);

    // An empty stride length clears it (null in the API).
    t.clock.advance(60);
    await submit(browser, '/account', '/account/profile', { display_name: 'Pat', timezone: 'UTC', daily_step_goal: '0', stride_length_cm: '' });
    assert.equal((await t.database.stores.users.findById(user.id))?.stride_length_cm, null);
  });

  it('saves the year of birth and the maximum heart rate, and clears them when left empty', async () => {
    const user = await newAccount(t, 'Hearty');
    const browser = await signedIn(t, user);
    const page = await browser.get('/account');
    assert.match(page.body, /<label for="birth_year">Year of birth <span class="optional">\(optional\)<\/span><\/label>/);
    assert.match(page.body, /<label for="max_heart_rate">Maximum heart rate in beats per minute <span class="optional">\(optional\)<\/span><\/label>/);
    assert.match(page.body, /id="birth_year" name="birth_year" type="number"[^>]* value=""/);
    const form = { display_name: 'Hearty', timezone: 'UTC', daily_step_goal: '10000', stride_length_cm: '' };
    const saved = await submit(browser, '/account', '/account/profile', { ...form, birth_year: ' 1984 ', max_heart_rate: '191' });
    assert.equal(saved.status, 303);
    let stored = await t.database.stores.users.findById(user.id);
    assert.deepEqual([stored?.birth_year, stored?.max_heart_rate], [1984, 191]);
    const shown = await browser.get('/account?saved=profile');
    assert.match(shown.body, /id="birth_year" name="birth_year"[^>]* value="1984"/);
    assert.match(shown.body, /id="max_heart_rate" name="max_heart_rate"[^>]* value="191"/);
    assert.equal((await submit(browser, '/account', '/account/profile', { ...form, birth_year: '', max_heart_rate: '' })).status, 303);
    stored = await t.database.stores.users.findById(user.id);
    assert.deepEqual([stored?.birth_year, stored?.max_heart_rate], [null, null]);
  });

  it('tells the apps that read the profile of a change made here: one profile.updated, naming what changed', async () => {
    const person = await newAccount(t, 'Mover');
    const browser = await signedIn(t, person);
    await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI);
    const basic = `Basic ${Buffer.from(`${f.app.clientId}:${f.secret}`).toString('base64')}`;
    type FeedEvent = { type: string; data: { user_id: string; fields?: string[] } };
    /** The app's feed, every page, as it reads it: the person's profile.updated events. */
    const heard = async () => {
      const events: FeedEvent[] = [];
      for (let cursor = ''; ; ) {
        const page = (await t.app.inject({ method: 'GET', url: `/v1/events?limit=1000${cursor && `&after=${cursor}`}`, headers: { authorization: basic } })).json();
        if (page.data.length === 0) break;
        events.push(...page.data);
        cursor = page.next_cursor;
      }
      return events.filter((event) => event.type === 'profile.updated' && event.data.user_id === person.id);
    };
    const heardAtLeast = (count: number) => pageWith(heard, (events) => events.length >= count);
    const form = { display_name: 'Mover', timezone: 'UTC', daily_step_goal: '10000', stride_length_cm: '' };

    assert.equal((await submit(browser, '/account', '/account/profile', { ...form, timezone: 'Asia/Tokyo' })).status, 303);
    assert.deepEqual((await heardAtLeast(1)).map((event) => event.data), [{ user_id: person.id, fields: ['timezone'] }]);
    // Saved again as it is: nothing changed, nothing to tell. The next change is heard after it.
    assert.equal((await submit(browser, '/account', '/account/profile', { ...form, timezone: 'Asia/Tokyo' })).status, 303);
    assert.equal((await submit(browser, '/account', '/account/profile', { ...form, timezone: 'Asia/Tokyo', daily_step_goal: '12000' })).status, 303);
    assert.deepEqual((await heardAtLeast(2)).map((event) => event.data.fields), [['timezone'], ['daily_step_goal']]);
  });

  it('shows each profile error next to its field, keeps the input and saves nothing', async () => {
    const user = await newAccount(t, 'Careful');
    const browser = await signedIn(t, user);
    const response = await submit(browser, '/account', '/account/profile', {
      display_name: '   ', timezone: 'Mars/Olympus_Mons', daily_step_goal: '12.5', stride_length_cm: '400', birth_year: '1850', max_heart_rate: 'fast',
    });
    assert.equal(response.status, 400);
    const expected: Record<string, RegExp> = {
      display_name: /Display name must not be empty/,
      timezone: /Time zone must be an IANA time zone name/,
      daily_step_goal: /Daily step goal must be an integer/,
      stride_length_cm: /Stride length must be from 30 to 250, got 400/,
      birth_year: /Year of birth must be from 1900 to \d{4}, got 1850/,
      max_heart_rate: /Maximum heart rate must be an integer, got "fast"/,
    };
    for (const [field, message] of Object.entries(expected)) {
      assert.match(textOf(response.body, `${field}-error`)!, message);
      assert.match(response.body, new RegExp(`id="${field}"[^>]*aria-describedby="[^"]*${field}-error`), field);
    }
    assert.match(response.body, /value="Mars\/Olympus_Mons"/);
    assert.match(response.body, /value="12.5"/);
    assert.match(response.body, /value="400"/);
    assert.equal((await t.database.stores.users.findById(user.id))?.timezone, 'UTC');
  });

  it('lists connected apps with scopes in plain words, when granted and last used', async () => {
    const user = await newAccount(t, 'Connected');
    const browser = await signedIn(t, user);
    await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI, ['write_activity']);
    let page = await browser.get('/account');
    assert.match(page.body, /<h3>Pace Coach<\/h3>/);
    assert.match(page.body, /Made by Ada Developer/);
    assert.match(page.body, /See your profile: name, time zone, daily step goal, stride length, year of birth and maximum heart rate/);
    assert.match(page.body, /See your steps, distance and calories/);
    assert.doesNotMatch(page.body, /Add and change your steps, distance and calories/, 'an unticked scope is not listed');
    assert.match(page.body, /<dt>Allowed<\/dt><dd><time datetime="\d{4}-\d\d-\d\dT/);
    assert.match(page.body, /<dt>Last used<\/dt><dd>Not yet/);

    const tokens = await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI, ['write_activity']);
    t.clock.advance(120);
    assert.equal(await profileStatus(t, tokens.access_token), 200);
    page = await browser.get('/account');
    assert.match(page.body, /<dt>Last used<\/dt><dd><time datetime=/);
  });

  it('revokes an app: its access and refresh tokens stop working, other apps keep theirs', async () => {
    const user = await newAccount(t, 'Revoker');
    const browser = await signedIn(t, user);
    const tokens = await grantThroughConsent(t, browser, f.app, f.secret, OTHER_REDIRECT_URI);
    const { registerApp } = await import('../../src/domain/apps.js');
    const other = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Other Coach', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false,
    });
    const otherTokens = await grantThroughConsent(t, browser, other.app, other.clientSecret!, REDIRECT_URI);

    const action = `/account/connected-apps/${f.app.id}/revoke`;
    const revoked = await submit(browser, '/account', action, {});
    assert.equal(revoked.status, 303);
    const page = await browser.get(revoked.location().pathname + revoked.location().search);
    assert.match(page.body, /Pace Coach can no longer access your account/);
    assert.doesNotMatch(page.body, /<h3>Pace Coach<\/h3>/);
    assert.match(page.body, /<h3>Other Coach<\/h3>/);
    assert.equal(await profileStatus(t, tokens.access_token), 401);
    const refused = await refresh(t, f, tokens.refresh_token);
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error, 'invalid_grant');
    assert.equal(await profileStatus(t, otherTokens.access_token), 200);
  });

  it('announces a revocation only when this session made it', async () => {
    const user = await newAccount(t, 'Noticed');
    const browser = await signedIn(t, user);
    await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI);
    const notice = (html: string) => textOf(html, 'notice');
    // A crafted link names an app (held or not) but proves nothing: no notice.
    for (const query of [`revoked=${f.app.id}`, `revoked=${f.app.id}&proof=${'A'.repeat(43)}`, `revoked=${f.publicApp.id}&proof=`]) {
      const page = await browser.get(`/account?${query}`);
      assert.equal(page.status, 200);
      assert.equal(notice(page.body), undefined, query);
      assert.match(page.body, /<h3>Pace Coach<\/h3>/, 'still connected');
    }
    // The proof of one session's revocation says nothing in another session.
    const elsewhere = await newAccount(t, 'Elsewhere');
    const other = await signedIn(t, elsewhere);
    await grantThroughConsent(t, other, f.app, f.secret, REDIRECT_URI);
    const theirs = await submit(other, '/account', `/account/connected-apps/${f.app.id}/revoke`, {});
    const theirLink = theirs.location().pathname + theirs.location().search;
    assert.match(textOf((await other.get(theirLink)).body, 'notice') ?? '', /Pace Coach can no longer access your account/);
    assert.equal(notice((await browser.get(theirLink)).body), undefined);
    // Revoking an app this user never connected ends nothing, and announces nothing.
    const { csrf_token: csrf } = formFields((await browser.get('/account')).body, '/account/profile');
    const nothing = await browser.post(`/account/connected-apps/${f.publicApp.id}/revoke`, { csrf_token: csrf! });
    assert.equal(nothing.status, 303);
    assert.equal(nothing.headers.location, '/account');
  });

  it('refuses a display name with bidirectional controls, next to the field', async () => {
    const user = await newAccount(t, 'Plain');
    const browser = await signedIn(t, user);
    const response = await submit(browser, '/account', '/account/profile', {
      display_name: 'Eve\u202egnp.exe', timezone: 'UTC', daily_step_goal: '8000', stride_length_cm: '',
    });
    assert.equal(response.status, 400);
    assert.match(response.body, /Display name must not contain bidirectional control characters/);
    assert.equal((await t.database.stores.users.findById(user.id))?.display_name, 'Plain');
  });

  it('refuses a display name that reads as Stride, next to the field', async () => {
    const user = await newAccount(t, 'Plain');
    const browser = await signedIn(t, user);
    const response = await submit(browser, '/account', '/account/profile', {
      display_name: 'Str1de Team', timezone: 'UTC', daily_step_goal: '8000', stride_length_cm: '',
    });
    assert.equal(response.status, 400);
    assert.match(textOf(response.body, 'display_name-error')!, /^Display name must not read as "Stride", the name of this service/);
    assert.equal((await t.database.stores.users.findById(user.id))?.display_name, 'Plain');
  });

  it('refuses the profile, revoke and sign-out forms without or with a wrong CSRF token (403)', async () => {
    const user = await newAccount(t, 'Guarded');
    const browser = await signedIn(t, user);
    const tokens = await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI);
    const forms: Array<[string, Record<string, string>]> = [
      ['/account/profile', { display_name: 'Hijacked', timezone: 'UTC', daily_step_goal: '1', stride_length_cm: '' }],
      [`/account/connected-apps/${f.app.id}/revoke`, {}],
      ['/logout', {}],
    ];
    for (const [action, fields] of forms) {
      for (const csrf of [undefined, 'x'.repeat(43)]) {
        const response = await browser.post(action, csrf === undefined ? fields : { ...fields, csrf_token: csrf });
        assert.equal(response.status, 403, `${action} with ${csrf}`);
      }
    }
    assert.equal((await t.database.stores.users.findById(user.id))?.display_name, 'Guarded');
    assert.equal(await profileStatus(t, tokens.access_token), 200);
    assert.equal((await browser.get('/account')).status, 200, 'still signed in');
  });

  it('serves the copy script from Stride, and no page has inline scripts or handlers', async () => {
    const script = await new Browser(t.app).get('/assets/copy.js');
    assert.equal(script.status, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    const browser = await signedIn(t, f.developer);
    for (const path of ['/account', '/dashboard', '/dashboard/apps/new', `/dashboard/apps/${f.app.clientId}`]) {
      const page = await formPage(browser, path);
      assert.equal(page.status, 200, path);
      const csp = String(page.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.match(page.body, /<script src="\/assets\/copy.js" defer><\/script>/);
      assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, `${path}: inline script`);
      assert.doesNotMatch(page.body, /\son[a-z]+=/i, `${path}: inline handler`);
      assert.doesNotMatch(page.body, /https?:\/\/(?!stride\.test)[^"]*\.(css|js)/, `${path}: asset from elsewhere`);
      // Every visible input has a label.
      for (const match of page.body.matchAll(/<(input|textarea)\s[^>]*id="([^"]+)"/g)) {
        const id = match[2]!;
        if (/type="(checkbox|radio)"/.test(match[0])) continue;
        assert.match(page.body, new RegExp(`<label for="${id}"`), `${path}: #${id} has no label`);
      }
    }
  });
});
