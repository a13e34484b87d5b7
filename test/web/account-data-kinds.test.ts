/**
 * Every kind of a person's data on the account page: the export holds exactly what was uploaded
 * through the API — steps, distance (the uploaded minutes), calories, heart rate per minute, sleep
 * with its stages, weight — across the pages it reads, and so does the CSV of each kind; and
 * deleting the account leaves no row of the person in any table of data.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { createTestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { dataOf, uploadEveryKind } from '../support/person-uploads.js';
import { ALL_RESOURCE_SCOPES, issueAccessToken } from '../support/tokens.js';
import { Browser, formFields } from '../oauth/flow.js';
import { newAccount, PASSWORD, signedIn } from './pages-support.js';

cheapPasswordHashing();

forEachDialect('every kind of data in the export and the deletion', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('exports every kind exactly as it was uploaded, and only the person\'s own', async () => {
    const person = await newAccount(t, 'Everything');
    const other = await newAccount(t, 'Someone Else');
    const { token, appId } = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    // 40 days: more minutes of calories and heart rate than one page of the export (1,000) and one upload (10,080).
    const uploaded = await uploadEveryKind(t, token, 40);
    await uploadEveryKind(t, (await issueAccessToken(t, other, ALL_RESOURCE_SCOPES)).token, 2, 99);
    await t.database.stores.apps.delete(appId);
    assert.ok(uploaded.calories.length > 10_080 && uploaded.heartrate.length > 10_080 && uploaded.sleep.length >= 39 && uploaded.weight.length > 20);

    const browser = await signedIn(t, person);
    const response = await browser.get('/account/export.json');
    assert.equal(response.status, 200);
    const exported = response.json() as Record<string, unknown>;
    assert.equal(exported.email, person.email);
    assert.deepEqual(Object.keys(exported), ['exported_at', 'email', 'profile', 'connected_apps', 'sessions', 'steps', 'distance', 'calories', 'heartrate', 'sleep', 'weight']);
    const data = dataOf(exported);
    for (const kind of Object.keys(uploaded) as Array<keyof typeof uploaded>) assert.deepEqual(data[kind], uploaded[kind], kind);
    // Distance: the uploaded minutes only, not those read from steps.
    assert.ok(data.distance.length < data.steps.length);
    // A night crosses midnight, on the person's clock as on UTC's.
    assert.ok(data.sleep.some((s) => Math.floor(s.start_time / 86_400) !== Math.floor(s.end_time / 86_400)));
  });

  it('names every kind of data it holds on the account page and the deletion pages', async () => {
    const browser = await signedIn(t, await newAccount(t, 'Reader'));
    const account = (await browser.get('/account')).body;
    const kinds = 'steps, distance, calories, heart rate, sleep and weight';
    const section = (heading: string) => new RegExp(`<section aria-labelledby="${heading}"[\\s\\S]*?</section>`).exec(account)![0];
    assert.ok(section('export-heading').includes(kinds));
    assert.ok(section('delete-heading').includes(`all of your data — ${kinds} — are deleted`));
    for (const kind of ['steps', 'distance', 'calories', 'heartrate', 'sleep', 'weight']) assert.ok(section('export-heading').includes(`href="/account/export/${kind}.csv"`), kind);
    assert.match(account, /<a href="\/account\/data" id="see-your-data">See your data<\/a>/);
    const deleted = (await browser.get('/account/deleted')).body;
    assert.ok(deleted.includes(`all of your data — ${kinds} — are gone`));
    for (const page of [account, deleted]) assert.ok(!/minute of steps|steps and sessions|your steps \(CSV/i.test(page));
  });

  it('downloads each kind as CSV, a line per record (per stage for sleep), exactly as it was uploaded', async () => {
    const person = await newAccount(t, 'Spreadsheet');
    const other = await newAccount(t, 'Not Them');
    const { token, appId } = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    // 2 days: more heart-rate minutes than one page of the download (1,000).
    const uploaded = await uploadEveryKind(t, token, 2);
    await uploadEveryKind(t, (await issueAccessToken(t, other, ALL_RESOURCE_SCOPES)).token, 2, 99);
    await t.database.stores.apps.delete(appId);
    const browser = await signedIn(t, person);
    const csvOf = async (kind: string) => {
      const response = await browser.get(`/account/export/${kind}.csv`);
      assert.equal(response.status, 200, kind);
      assert.match(String(response.headers['content-type']), /^text\/csv; charset=utf-8/);
      assert.equal(response.headers['content-disposition'], `attachment; filename="stride-${kind}.csv"`);
      assert.equal(response.headers['cache-control'], 'no-store');
      return response.body.split('\n');
    };
    const expected = {
      steps: ['start_time,value', ...uploaded.steps.map((m) => `${m.start_time},${m.value}`)],
      distance: ['start_time,value', ...uploaded.distance.map((m) => `${m.start_time},${m.value}`)],
      calories: ['start_time,value', ...uploaded.calories.map((m) => `${m.start_time},${m.value}`)],
      heartrate: ['start_time,avg,min,max', ...uploaded.heartrate.map((m) => `${m.start_time},${m.avg},${m.min},${m.max}`)],
      sleep: [
        'session_start_time,session_end_time,stage,start_time,end_time',
        ...uploaded.sleep.flatMap((s) => s.stages.map((stage) => `${s.start_time},${s.end_time},${stage.stage},${stage.start_time},${stage.end_time}`)),
      ],
      weight: ['time,kg,fat_percent', ...uploaded.weight.map((w) => `${w.time},${w.kg},${w.fat_percent ?? ''}`)],
    };
    assert.ok(uploaded.heartrate.length > 1_000 && uploaded.sleep.length > 0 && uploaded.weight.length > 0);
    for (const [kind, lines] of Object.entries(expected)) assert.deepEqual(await csvOf(kind), [...lines, ''], kind);
    assert.equal((await browser.get('/account/export/everything.csv')).status, 404);
    assert.equal((await new Browser(t.app).get('/account/export/heartrate.csv')).status, 302, 'signed out: to the sign-in page');
  });

  it('deletes every kind of the person\'s data with the account, on every table', async () => {
    const person = await newAccount(t, 'Leaving');
    const { token, appId } = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    await uploadEveryKind(t, token, 2);
    await t.database.stores.apps.delete(appId);
    const db = t.database.db.kysely;
    const metricsOf = async () =>
      (await db.selectFrom('series_days').select('metric').distinct().where('user_id', '=', person.id).execute()).map((row) => row.metric).sort();
    const count = async (table: 'sleep_sessions' | 'body_weights' | 'series_days') =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', person.id).executeTakeFirstOrThrow()).n);
    assert.deepEqual(await metricsOf(), ['calories', 'distance', 'heartrate', 'steps'], 'every minute metric was stored');
    assert.ok((await count('sleep_sessions')) > 0 && (await count('body_weights')) > 0);

    const browser = await signedIn(t, person);
    const page = await browser.get('/account');
    const deleted = await browser.post('/account/delete', { ...formFields(page.body, '/account/delete'), password: PASSWORD });
    assert.equal(deleted.location().pathname, '/account/deleted');
    assert.deepEqual(await metricsOf(), []);
    for (const table of ['series_days', 'sleep_sessions', 'body_weights'] as const) assert.equal(await count(table), 0, table);
  });
});
