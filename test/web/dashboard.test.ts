/** The developer dashboard: listing, registering, editing (scope-change preview), rotating, deleting. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { hashCredential } from '../../src/security/secrets.js';
import { findAppByClientId } from '../../src/store/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { Browser, type Response, createFixture, createOAuthTestApp, formFields, REDIRECT_URI, refresh, tokenRequest, type Fixture } from '../oauth/flow.js';
import { formPage, grantThroughConsent, newAccount, profileStatus, signedIn, submit, textOf } from './pages-support.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('developer dashboard', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let developer: Browser;
  const appPage = () => `/dashboard/apps/${f.app.clientId}`;

  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
    developer = await signedIn(t, f.developer);
  });
  after(() => t.close());

  it('sends signed-out visitors to sign in and back', async () => {
    const visitor = new Browser(t.app);
    for (const path of ['/dashboard', '/dashboard/apps/new', appPage(), `${appPage()}/delete`]) {
      const response = await visitor.get(path);
      assert.equal(response.status, 302, path);
      assert.equal(response.location().pathname, '/login');
      assert.equal(response.location().searchParams.get('return_to'), path);
    }
    const post = await visitor.post('/dashboard/apps', { name: 'X' });
    assert.equal(post.status, 303);
    assert.equal(post.location().searchParams.get('return_to'), '/dashboard/apps/new');
  });

  it('lists only my apps, with their client ids', async () => {
    const mine = await developer.get('/dashboard');
    assert.equal(mine.status, 200);
    assert.match(mine.body, /Pace Coach/);
    assert.match(mine.body, /Pocket Walker/);
    assert.ok(mine.body.includes(f.app.clientId));
    assert.equal(mine.headers['cache-control'], 'no-store');
    const theirs = await (await signedIn(t, f.user)).get('/dashboard');
    assert.equal(theirs.status, 200);
    assert.doesNotMatch(theirs.body, /Pace Coach/);
    assert.match(theirs.body, /not registered an app yet/);
  });

  /** The page a form's redirect lands on, as a browser follows it. */
  const landing = async (browser: Browser, response: Response) => {
    assert.equal(response.status, 303, response.body.slice(0, 400));
    const to = response.location();
    return { path: to.pathname + to.search, page: await browser.get(to.pathname + to.search) };
  };

  it('registers a confidential app and shows its secret once, on the page the redirect lands on', async () => {
    const posted = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
      name: 'Step Sync', description: 'Syncs steps', website_url: 'https://stepsync.example',
      redirect_uris: 'https://stepsync.example/cb\r\nhttp://localhost:8080/cb\r\n',
      scopes: ['read_profile', 'read_activity'], client_type: 'confidential',
    });
    assert.doesNotMatch(posted.body, /stepsync/, 'the POST answer carries no secret');
    const { path, page: response } = await landing(developer, posted);
    assert.equal(response.status, 200, response.body.slice(0, 400));
    assert.equal(response.headers['cache-control'], 'no-store');
    const clientId = textOf(response.body, 'client-id')!;
    const secret = textOf(response.body, 'client-secret')!;
    assert.ok(clientId && secret);
    assert.match(response.body, /cannot show it again/);
    // A reload shows the credentials without the secret, and makes no new one.
    const reloaded = await developer.get(path);
    assert.equal(reloaded.status, 200);
    assert.equal(textOf(reloaded.body, 'client-secret'), undefined);
    assert.match(reloaded.body, /shown once already/);
    const stored = await findAppByClientId(t.database.db.kysely, clientId);
    assert.ok(stored);
    assert.equal(stored.ownerId, f.developer.id);
    assert.equal(stored.clientSecretHash, hashCredential(secret));
    assert.deepEqual(stored.redirectUris, ['https://stepsync.example/cb', 'http://localhost:8080/cb']);
    assert.deepEqual(stored.scopes, ['read_profile', 'read_activity']);
    assert.equal(stored.description, 'Syncs steps');
    // The detail page never shows the secret again.
    const detail = await developer.get(`/dashboard/apps/${clientId}`);
    assert.equal(detail.status, 200);
    assert.ok(detail.body.includes(clientId));
    assert.ok(!detail.body.includes(secret));
  });

  it('says what unticking every grant type does: on a new app, the first two; on an app, what it has', async () => {
    const form = await formPage(developer, '/dashboard/apps/new');
    // The hint matches the boxes as the form shows them: the first two ticked.
    assert.match(form.body, /The first two, ticked here, are what most apps need; an app registered with every box unticked gets those two as well\./);
    assert.deepEqual([...form.body.matchAll(/<input type="checkbox" id="grant-type-[^"]+" name="grant_types" value="[^"]+"( checked)?>/g)].map((m) => m[1] !== undefined), [true, true, false]);
    assert.doesNotMatch(form.body, /keeps what the app has/, 'a new app has nothing yet');
  });

  it('registers one app when the same registration form is sent twice', async () => {
    const form = await formPage(developer, '/dashboard/apps/new');
    const formId = new URLSearchParams(form.url.split('?')[1]).get('form');
    const fields: Record<string, string> = {
      ...formFields(form.body, '/dashboard/apps'),
      name: 'Twice Sent', redirect_uris: 'https://twice.example/cb', scopes: 'read_profile', client_type: 'confidential',
    };
    assert.ok(formId && fields.form_id === formId, 'the form carries the id of its page');
    const first = await developer.post('/dashboard/apps', fields);
    const clientId = textOf((await landing(developer, first)).page.body, 'client-id')!;
    const [again, concurrent] = await Promise.all([developer.post('/dashboard/apps', fields), developer.post('/dashboard/apps', fields)]);
    for (const response of [again, concurrent]) {
      assert.equal(response.status, 303);
      assert.equal(response.headers.location, `/dashboard/apps/${clientId}?registered=again`);
    }
    const named = await t.database.db.kysely.selectFrom('apps').select('client_id').where('name', '=', 'Twice Sent').execute();
    assert.deepEqual(named.map((row) => row.client_id), [clientId]);
    const detail = await developer.get(`/dashboard/apps/${clientId}?registered=again`);
    assert.match(detail.body, /no second app was made/);
    const otherForm = await formPage(developer, '/dashboard/apps/new');
    assert.notEqual(formFields(otherForm.body, '/dashboard/apps').form_id, fields.form_id, 'each form has its own id');
  });

  it('registers one app when a form is sent again after Back, from its page loaded anew; other settings are another app', async () => {
    const settings = { name: 'Back Again', redirect_uris: 'https://back.example/cb', scopes: 'read_profile', client_type: 'confidential' };
    const { url } = await formPage(developer, '/dashboard/apps/new');
    const first = await submit(developer, url, '/dashboard/apps', settings);
    const clientId = textOf((await landing(developer, first)).page.body, 'client-id')!;
    // Back: the form's page is loaded again from its address (the same form id), the browser refills the fields.
    const again = await submit(developer, url, '/dashboard/apps', settings);
    assert.equal(again.status, 303);
    assert.equal(again.headers.location, `/dashboard/apps/${clientId}?registered=again`);
    const named = await t.database.db.kysely.selectFrom('apps').select('client_id').where('name', '=', 'Back Again').execute();
    assert.equal(named.length, 1);
    // The same page sent with other settings, or a new form: another app.
    const other = await submit(developer, url, '/dashboard/apps', { ...settings, redirect_uris: 'https://back.example/other' });
    assert.match(other.location().pathname, /\/created$/);
    const newForm = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', settings);
    assert.match(newForm.location().pathname, /\/created$/);
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').where('name', '=', 'Back Again').execute()).length, 3);
  });

  it('gives the registration page its form id in its address, keeping the rest of the query', async () => {
    const opened = await developer.get('/dashboard/apps/new?from=dashboard');
    assert.equal(opened.status, 302);
    assert.equal(opened.location().pathname, '/dashboard/apps/new');
    assert.equal(opened.location().searchParams.get('from'), 'dashboard');
    assert.match(opened.location().searchParams.get('form') ?? '', /^[\w-]{22}$/);
    const kept = await developer.get(opened.location().pathname + opened.location().search);
    assert.equal(kept.status, 200);
    assert.equal(formFields(kept.body, '/dashboard/apps').form_id, opened.location().searchParams.get('form'));
  });

  it("shows how to connect a person: the app's authorization URL, which its developer can try", async () => {
    const page = await developer.get(appPage());
    const shown = new URL(textOf(page.body, 'authorize-url')!);
    assert.equal(`${shown.origin}${shown.pathname}`, 'http://stride.test/oauth2/authorize');
    assert.equal(shown.searchParams.get('client_id'), f.app.clientId);
    assert.equal(shown.searchParams.get('redirect_uri'), REDIRECT_URI);
    assert.equal(shown.searchParams.get('scope'), 'read_profile read_activity write_activity');
    assert.equal(shown.searchParams.get('code_challenge'), null);
    assert.match(page.body, /exchanges at <code>http:\/\/stride\.test\/oauth2\/token<\/code>/);

    const tryIt = new URL(/<a href="([^"]*)" id="try-authorize">/.exec(page.body)![1]!.replaceAll('&amp;', '&'));
    const consent = await developer.get(tryIt.pathname + tryIt.search);
    assert.equal(consent.status, 200);
    assert.match(consent.body, /Pace Coach wants to access your Stride account/);

    const publicPage = await developer.get(`/dashboard/apps/${f.publicApp.clientId}`);
    const publicUrl = new URL(textOf(publicPage.body, 'authorize-url')!);
    assert.equal(publicUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(publicUrl.searchParams.get('redirect_uri'), 'com.example.walker:/cb');
    assert.doesNotMatch(publicPage.body, /try-authorize/, 'a public app needs a PKCE challenge of its own');
  });

  it('registers a public app without a secret', async () => {
    const posted = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
      name: 'Phone App', redirect_uris: 'com.example.phone:/cb', scopes: 'read_activity', client_type: 'public',
    });
    const response = (await landing(developer, posted)).page;
    assert.equal(response.status, 200);
    assert.equal(textOf(response.body, 'client-secret'), undefined);
    const stored = await findAppByClientId(t.database.db.kysely, textOf(response.body, 'client-id')!);
    assert.equal(stored?.isPublic, true);
    assert.equal(stored?.clientSecretHash, null);
  });

  it('shows every validation error next to its field and keeps the input', async () => {
    const before = (await t.database.db.kysely.selectFrom('apps').select('id').execute()).length;
    const response = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
      name: '  ', description: 'Kept <description>', website_url: 'ftp://files.example',
      redirect_uris: 'https://ok.example/cb\nhttp://evil.example/cb', client_type: 'public',
    });
    assert.equal(response.status, 400);
    for (const field of ['name', 'website_url', 'redirect_uris', 'scopes']) {
      assert.match(response.body, new RegExp(`id="${field}-error" class="field-error"`), field);
      assert.match(response.body, new RegExp(`aria-describedby="[^"]*${field}-error`), field);
    }
    assert.match(textOf(response.body, 'redirect_uris-error')!, /must use https/);
    assert.match(response.body, /Kept &lt;description&gt;<\/textarea>/);
    assert.match(response.body, /https:\/\/ok.example\/cb\nhttp:\/\/evil.example\/cb<\/textarea>/);
    assert.match(response.body, /value="ftp:\/\/files.example"/);
    assert.match(response.body, /value="public" checked/);
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').execute()).length, before);
  });

  it('shows an app only to its owner (404 for anyone else, for every action)', async () => {
    const stranger = await signedIn(t, await newAccount(t, 'Mallory'));
    assert.equal((await stranger.get(appPage())).status, 404);
    assert.equal((await stranger.get(`${appPage()}/delete`)).status, 404);
    assert.equal((await stranger.get('/dashboard/apps/no-such-client')).status, 404);
    const csrf = formFields((await stranger.get('/dashboard')).body, '/logout').csrf_token!;
    const edit = await stranger.post(appPage(), { csrf_token: csrf, name: 'Pwned', redirect_uris: REDIRECT_URI, scopes: 'read_profile', confirm_scope_change: 'yes' });
    const rotate = await stranger.post(`${appPage()}/secret`, { csrf_token: csrf });
    const remove = await stranger.post(`${appPage()}/delete`, { csrf_token: csrf });
    assert.deepEqual([edit.status, rotate.status, remove.status], [404, 404, 404]);
    const stored = await findAppByClientId(t.database.db.kysely, f.app.clientId);
    assert.equal(stored?.name, 'Pace Coach');
    assert.equal(stored?.clientSecretHash, hashCredential(f.secret));
  });

  it('refuses every dashboard form without or with a wrong CSRF token (403), changing nothing', async () => {
    const target = await findAppByClientId(t.database.db.kysely, f.publicApp.clientId);
    const forms: Array<[string, Record<string, string>]> = [
      ['/dashboard/apps', { name: 'No CSRF', redirect_uris: REDIRECT_URI, scopes: 'read_profile', client_type: 'confidential' }],
      [`/dashboard/apps/${f.publicApp.clientId}`, { name: 'Renamed', redirect_uris: 'com.example.walker:/cb', scopes: 'read_profile', confirm_scope_change: 'yes' }],
      [`/dashboard/apps/${f.app.clientId}/secret`, {}],
      [`/dashboard/apps/${f.publicApp.clientId}/delete`, {}],
    ];
    for (const [action, fields] of forms) {
      for (const csrf of [undefined, 'wrong-token']) {
        const response = await developer.post(action, csrf === undefined ? fields : { ...fields, csrf_token: csrf });
        assert.equal(response.status, 403, `${action} with ${csrf}`);
        assert.match(response.body, /CSRF/);
      }
    }
    assert.deepEqual(await findAppByClientId(t.database.db.kysely, f.publicApp.clientId), target);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.app.clientId))?.clientSecretHash, hashCredential(f.secret));
    assert.equal((await t.database.db.kysely.selectFrom('apps').where('name', '=', 'No CSRF').selectAll().execute()).length, 0);
  });

  it('refuses app names with bidirectional controls or zero-width characters, on registration and on update', async () => {
    const before = (await t.database.db.kysely.selectFrom('apps').select('id').execute()).length;
    for (const name of ['Pace\u202eeoC', 'Pace\u200bCoach']) {
      const created = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
        name, redirect_uris: 'https://ok.example/cb', scopes: 'read_profile', client_type: 'confidential',
      });
      assert.equal(created.status, 400);
      assert.match(textOf(created.body, 'name-error')!, /must not contain invisible formatting characters/);
      const page = appPage();
      const updated = await submit(developer, page, page, { name, redirect_uris: REDIRECT_URI, scopes: f.app.scopes.join(' ') });
      assert.equal(updated.status, 400);
      assert.match(textOf(updated.body, 'name-error')!, /must not contain invisible formatting characters/);
    }
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').execute()).length, before);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.app.clientId))?.name, 'Pace Coach');
  });

  it('refuses app names that read as Stride, on registration and on update', async () => {
    const before = (await t.database.db.kysely.selectFrom('apps').select('id').execute()).length;
    for (const name of ['Stride', 'Ｓｔｒｉｄｅ Official', 'Str\u0456de Support']) {
      const created = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
        name, redirect_uris: 'https://ok.example/cb', scopes: 'read_profile', client_type: 'confidential',
      });
      assert.equal(created.status, 400);
      assert.match(textOf(created.body, 'name-error')!, /^Name must not read as "Stride", the name of this service/);
      const page = appPage();
      const updated = await submit(developer, page, page, { name, redirect_uris: REDIRECT_URI, scopes: f.app.scopes.join(' ') });
      assert.equal(updated.status, 400);
      assert.match(textOf(updated.body, 'name-error')!, /^Name must not read as "Stride"/);
    }
    assert.equal((await t.database.db.kysely.selectFrom('apps').select('id').execute()).length, before);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.app.clientId))?.name, 'Pace Coach');
  });

  it('saves settings without a scope change at once, and keeps input on errors', async () => {
    const page = `/dashboard/apps/${f.publicApp.clientId}`;
    const saved = await submit(developer, page, page, {
      name: 'Pocket Walker 2', description: 'New text', website_url: '', redirect_uris: 'com.example.walker:/cb\nhttp://127.0.0.1:9/cb',
      scopes: ['read_profile', 'read_activity'],
    });
    assert.equal(saved.status, 303);
    assert.equal(saved.location().pathname, page);
    assert.equal(textOf((await developer.get(saved.location().pathname + saved.location().search)).body, 'notice'), 'Saved.');
    assert.equal((await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))?.name, 'Pocket Walker 2');

    const invalid = await submit(developer, page, page, { name: 'Still kept', redirect_uris: 'not a url', scopes: 'read_profile' });
    assert.equal(invalid.status, 400);
    assert.match(textOf(invalid.body, 'redirect_uris-error')!, /not an absolute URL/);
    assert.match(invalid.body, /value="Still kept"/);
    assert.match(invalid.body, />not a url<\/textarea>/);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))?.name, 'Pocket Walker 2');
  });

  it('allows an app the device grant from its settings, and keeps its grant types when none is ticked', async () => {
    const page = `/dashboard/apps/${f.publicApp.clientId}`;
    const before = await developer.get(page);
    assert.match(before.body, /Leaving every box unticked keeps what the app has\./);
    assert.match(before.body, /id="grant-type-authorization_code" name="grant_types" value="authorization_code" checked/);
    assert.doesNotMatch(before.body, /id="grant-type-device_code"[^>]*checked/);
    const current = await findAppByClientId(t.database.db.kysely, f.publicApp.clientId);
    const settings = { name: current!.name, redirect_uris: current!.redirectUris.join('\n'), scopes: current!.scopes };
    const device = 'urn:ietf:params:oauth:grant-type:device_code';
    const saved = await submit(developer, page, page, { ...settings, grant_types: ['authorization_code', 'refresh_token', device] });
    assert.equal(saved.status, 303);
    assert.deepEqual((await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))?.grantTypes, ['authorization_code', 'refresh_token', device]);
    assert.equal((await submit(developer, page, page, settings)).status, 303);
    assert.deepEqual((await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))?.grantTypes, ['authorization_code', 'refresh_token', device]);
    const unknown = await submit(developer, page, page, { ...settings, grant_types: 'password' });
    assert.equal(unknown.status, 400);
    assert.match(textOf(unknown.body, 'grant_types-error')!, /^Unknown grant type "password"/);
    assert.equal((await submit(developer, page, page, { ...settings, grant_types: ['authorization_code', 'refresh_token'] })).status, 303);
  });

  it('sets and clears "require PAR" (RFC 9126), which the authorization endpoint then enforces', async () => {
    const page = `/dashboard/apps/${f.publicApp.clientId}`;
    const current = (await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))!;
    const settings = { name: current.name, description: current.description, website_url: '', redirect_uris: current.redirectUris.join('\n'), scopes: current.scopes };
    const form = await developer.get(page);
    assert.match(form.body, /id="require_par" name="require_par" value="yes" aria-describedby/);
    const on = await submit(developer, page, page, { ...settings, require_par: 'yes' });
    assert.equal(on.status, 303);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))?.requirePar, true);
    assert.match((await developer.get(page)).body, /id="require_par" name="require_par" value="yes" checked aria-describedby/);
    const plain = await developer.get(`/oauth2/authorize?client_id=${f.publicApp.clientId}&response_type=code&redirect_uri=${encodeURIComponent('com.example.walker:/cb')}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`);
    assert.equal(plain.status, 400);
    assert.match(plain.body, /requires pushed authorization requests/);
    const off = await submit(developer, page, page, settings);
    assert.equal(off.status, 303);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.publicApp.clientId))?.requirePar, false);
  });

  it('previews how many grants a scope change ends, then ends only the differing ones', async () => {
    const db = t.database.db.kysely;
    const { app, clientSecret } = await (await import('../../src/domain/apps.js')).registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Scope Shifter', redirectUris: [REDIRECT_URI], scopes: ['read_profile', 'read_activity', 'write_activity'], isPublic: false,
    });
    const full = await newAccount(t, 'Full');
    const partial = await newAccount(t, 'Partial');
    const third = await newAccount(t, 'Third');
    const fullTokens = await grantThroughConsent(t, await signedIn(t, full), app, clientSecret!, REDIRECT_URI);
    const partialTokens = await grantThroughConsent(t, await signedIn(t, partial), app, clientSecret!, REDIRECT_URI, ['write_activity']);
    const thirdTokens = await grantThroughConsent(t, await signedIn(t, third), app, clientSecret!, REDIRECT_URI, ['read_activity']);
    assert.equal(partialTokens.scope, 'read_profile read_activity');

    const page = `/dashboard/apps/${app.clientId}`;
    // The same save also allows the device grant: confirming the scopes must not lose that.
    const grantTypes = ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'];
    const preview = await submit(developer, page, page, {
      name: 'Scope Shifter', redirect_uris: REDIRECT_URI, scopes: ['read_profile', 'read_activity'], grant_types: grantTypes,
    });
    assert.equal(preview.status, 200);
    assert.match(textOf(preview.body, 'grants-ended')!, /2 users' grants will end/);
    // Nothing has changed yet.
    assert.deepEqual((await findAppByClientId(db, app.clientId))?.scopes, ['read_profile', 'read_activity', 'write_activity']);
    for (const token of [fullTokens, partialTokens, thirdTokens]) assert.equal(await profileStatus(t, token.access_token), 200);

    // As a browser sends the form: every value of a field that repeats.
    const repeated = [...preview.body.matchAll(/name="grant_types" value="([^"]+)"/g)].map((match) => match[1]!);
    const confirm = await developer.post(page, { ...formFields(preview.body, page), grant_types: repeated });
    assert.equal(confirm.status, 303);
    assert.equal(confirm.location().searchParams.get('ended'), '2');
    assert.match(textOf((await developer.get(confirm.location().pathname + confirm.location().search)).body, 'notice')!, /2 users' grants were ended/);
    assert.deepEqual((await findAppByClientId(db, app.clientId))?.scopes, ['read_profile', 'read_activity']);
    assert.deepEqual((await findAppByClientId(db, app.clientId))?.grantTypes, grantTypes);
    assert.equal(await profileStatus(t, fullTokens.access_token), 401);
    assert.equal(await profileStatus(t, thirdTokens.access_token), 401);
    assert.equal(await profileStatus(t, partialTokens.access_token), 200, 'the grant with the same scope set stays');
    const refused = await refresh(t, { ...f, app, secret: clientSecret! }, fullTokens.refresh_token);
    assert.equal(refused.json().error, 'invalid_grant');
    const kept = await refresh(t, { ...f, app, secret: clientSecret! }, partialTokens.refresh_token);
    assert.equal(kept.statusCode, 200);
  });

  it('rotates the secret: shown once, the old one is refused with invalid_client, the new one works', async () => {
    const browser = await signedIn(t, f.user);
    const page = appPage();
    const posted = await submit(developer, page, `${page}/secret`, {});
    const { path, page: rotated } = await landing(developer, posted);
    assert.equal(rotated.status, 200);
    const newSecret = textOf(rotated.body, 'client-secret')!;
    assert.ok(newSecret && newSecret !== f.secret);
    assert.match(rotated.body, /shown only this once/);
    // A reload neither shows it again nor rotates again: the secret just copied keeps working.
    const reloaded = await developer.get(path);
    assert.equal(textOf(reloaded.body, 'client-secret'), undefined);
    assert.match(textOf(reloaded.body, 'notice')!, /shown once already/);
    assert.equal((await findAppByClientId(t.database.db.kysely, f.app.clientId))?.clientSecretHash, hashCredential(newSecret));
    const newest = newSecret;

    const oldTry = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(oldTry.statusCode, 401);
    assert.equal(oldTry.json().error, 'invalid_client');
    const tokens = await grantThroughConsent(t, browser, f.app, newest, REDIRECT_URI);
    assert.equal(await profileStatus(t, tokens.access_token), 200);
    f.secret = newest;
  });

  it('deletes an app after a confirmation step, revoking every token', async () => {
    const browser = await signedIn(t, await newAccount(t, 'Doomed'));
    const tokens = await grantThroughConsent(t, browser, f.app, f.secret, REDIRECT_URI);
    const confirmation = await developer.get(`${appPage()}/delete`);
    assert.equal(confirmation.status, 200);
    assert.match(confirmation.body, /users lose<\/strong> the connection/);
    assert.ok(await findAppByClientId(t.database.db.kysely, f.app.clientId), 'the confirmation page deletes nothing');
    const deleted = await developer.post(`${appPage()}/delete`, formFields(confirmation.body, `${appPage()}/delete`));
    assert.equal(deleted.status, 303);
    assert.equal(deleted.location().pathname, '/dashboard');
    assert.match((await developer.get('/dashboard?deleted=1')).body, /The app was deleted/);
    assert.equal(await findAppByClientId(t.database.db.kysely, f.app.clientId), undefined);
    assert.equal(await profileStatus(t, tokens.access_token), 401);
    assert.equal((await developer.get(appPage())).status, 404);
  });

  it('refuses a webhook URL on this machine next to the URL field, saying how an operator allows it for development', async () => {
    const { app } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: 'Hooked', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false });
    const list = `/dashboard/apps/${app.clientId}/webhooks`;
    const refused = await submit(developer, list, list, { url: 'http://127.0.0.1:4000/hooks', events: ['steps.updated'] });
    assert.equal(refused.status, 400);
    assert.match(textOf(refused.body, 'url-error')!, /^The URL must be https:\/\/ \(for development, the operator can allow http:\/\/ and private addresses with WEBHOOK_ALLOW_PRIVATE=true\)\.$/);
    assert.match(refused.body, /id="url"[^>]*aria-describedby="url-hint url-error"[^>]*aria-invalid="true"/);
    const local = await submit(developer, list, list, { url: 'https://127.0.0.1:4000/hooks', events: ['steps.updated'] });
    assert.match(textOf(local.body, 'url-error')!, /public address.*WEBHOOK_ALLOW_PRIVATE=true/);
    const noEvents = await submit(developer, list, list, { url: 'https://hooks.example/x', events: [] });
    assert.match(textOf(noEvents.body, 'events-error')!, /^Name at least one event type/);
    assert.equal(textOf(noEvents.body, 'url-error'), undefined);
  });
});
