/**
 * Every kind of a person's data on the account page: the export holds exactly what was uploaded
 * through the API — steps, distance (the uploaded minutes), calories, heart rate per minute, sleep
 * with its stages, weight — across the pages it reads; and deleting the account leaves no row of
 * the person in any table of data.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { createTestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { dataOf, uploadEveryKind } from '../support/person-uploads.js';
import { ALL_RESOURCE_SCOPES, issueAccessToken } from '../support/tokens.js';
import { formFields } from '../oauth/flow.js';
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
