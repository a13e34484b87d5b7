/**
 * The grant store (store/grants.ts): one grant per user and app, whose id survives every later
 * consent, so the codes and tokens issued under it stay attached to it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { hashCredential, newCredential } from '../../src/security/secrets.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { consentOutcome } from '../../src/oauth/authorize.js';
import { createUser, issueAccessToken, type TestUser } from '../support/tokens.js';
import { eventRows } from '../support/events.js';

forEachDialect('grant store', (dialect) => {
  let t: TestApp;
  let user: TestUser;

  before(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t);
  });
  after(() => t.close());

  it('a consent creates the grant once; a later one changes its scope and keeps its id', async () => {
    const db = t.database.db.kysely;
    const grants = t.database.stores.grants;
    const { app } = await registerApp(t.database.stores.apps, t.clock, user.id, {
      name: 'Grant Test',
      redirectUris: ['https://app.example.test/callback'],
      scopes: ['read_profile', 'read_activity'],
      isPublic: false,
    });
    const consent = (newGrantId: string, granted: string[], now: number) => ({
      userId: user.id, appId: app.id, newGrantId, granted, now,
      issue: {
        code: {
          code_hash: hashCredential(newCredential('authorizationCode')), app_id: app.id, user_id: user.id, redirect_uri: 'https://app.example.test/callback',
          scope: granted.join(' '), code_challenge: null, code_challenge_method: null, expires_at: now + 60, consumed_at: null, created_at: now, requested_scope: null,
        },
      },
    });
    const created = t.clock();
    const firstId = randomUUID();
    assert.equal(await grants.recordConsent(consent(firstId, ['read_profile'], created), () => ({ grantScope: 'read_profile', withdrawn: [] })), true);

    t.clock.advance(30);
    let previousScope: string | undefined;
    const rule = (previous: string) => {
      previousScope = previous;
      return { grantScope: 'read_activity read_profile', withdrawn: [] };
    };
    assert.equal(await grants.recordConsent(consent(randomUUID(), ['read_activity'], t.clock()), rule), true);
    assert.equal(previousScope, 'read_profile', 'the rule sees the scope the first consent left');
    const codes = await db.selectFrom('authorization_codes').select('grant_id').where('app_id', '=', app.id).execute();
    assert.deepEqual(codes.map((code) => code.grant_id), [firstId, firstId], 'both codes belong to the one grant');

    assert.equal(await grants.recordConsent(consent(randomUUID(), ['write_activity'], t.clock()), rule), false, 'a scope the app is not registered for records nothing');

    const stored = await grants.find(user.id, app.id);
    assert.ok(stored);
    assert.equal(stored.id, firstId);
    assert.equal(stored.scope, 'read_activity read_profile');
    assert.equal(Number(stored.created_at), created);
    assert.equal(Number(stored.updated_at), created + 30);
    const count = await db.selectFrom('grants').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', app.id).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  it('drops the messages about a kind of data still waiting for the app when the person withdraws the scope that reads it', async () => {
    const db = t.database.db.kysely;
    const { app } = await registerApp(t.database.stores.apps, t.clock, user.id, {
      name: 'Withdrawn Sleep', redirectUris: ['https://app.example.test/callback'], scopes: ['read_profile', 'read_sleep'], isPublic: false,
    });
    const endpoint = await t.database.stores.webhooks.add(app.id, 'https://hooks.example.test/in', ['sleep.updated', 'profile.updated'], t.clock(), { atMost: 10 });
    assert.ok(endpoint);
    const consent = (requested: string[], granted: string[]) =>
      t.database.stores.grants.recordConsent(
        {
          userId: user.id, appId: app.id, newGrantId: randomUUID(), granted, now: t.clock(),
          issue: {
            code: {
              code_hash: hashCredential(newCredential('authorizationCode')), app_id: app.id, user_id: user.id, redirect_uri: 'https://app.example.test/callback',
              scope: granted.join(' '), code_challenge: null, code_challenge_method: null, expires_at: t.clock() + 60, consumed_at: null, created_at: t.clock(), requested_scope: null,
            },
          },
        },
        (previous) => consentOutcome(previous === '' ? [] : previous.split(' '), requested, granted),
      );
    assert.equal(await consent(['read_profile', 'read_sleep'], ['read_profile', 'read_sleep']), true);
    // Another app of the person uploads a night and changes the profile: this app is told of both.
    const writer = await issueAccessToken(t, user, ['write_sleep', 'write_profile']);
    const start = Math.floor(t.clock() / 60) * 60 - 10 * 3600;
    const night = await t.app.inject({
      method: 'POST', url: '/v1/users/me/sleep/', headers: { authorization: `Bearer ${writer.token}` },
      payload: { start_time: start, end_time: start + 3600, stages: [{ stage: 'light', start_time: start, end_time: start + 3600 }] },
    });
    assert.equal(night.statusCode, 200, night.body);
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: { authorization: `Bearer ${writer.token}` }, payload: { daily_step_goal: 9000 } })).statusCode, 200);
    const messages = async () => (await db.selectFrom('webhook_deliveries').select('type').where('endpoint_id', '=', endpoint.id).execute()).map((row) => row.type).sort();
    assert.deepEqual(await messages(), ['profile.updated', 'sleep.updated']);
    // The sleep message failed (its receiver was down for days): a developer could send it again.
    await db.updateTable('webhook_deliveries').set({ state: 'failed' }).where('endpoint_id', '=', endpoint.id).where('type', '=', 'sleep.updated').execute();
    assert.deepEqual(await feedTypes(app.id), ['grant.created', 'profile.updated', 'sleep.updated']);

    // The person asked again, and unticked sleep.
    assert.equal(await consent(['read_profile', 'read_sleep'], ['read_profile']), true);
    assert.deepEqual(await messages(), ['profile.updated'], 'the app no longer reads sleep: no sleep message is left to send, failed or not');
    assert.deepEqual(await feedTypes(app.id), ['grant.created', 'profile.updated'], 'nor does its feed replay the night');
  });

  it('drops every message and feed event about the person\'s data when the grant ends — revoked, or the account deleted — and keeps grant.revoked', async () => {
    const db = t.database.db.kysely;
    const person = await createUser(t);
    const reader = await issueAccessToken(t, person, ['read_sleep', 'read_profile']);
    const other = await issueAccessToken(t, person, ['read_sleep']);
    // Apps of another developer: deleting the person's account must not take them along.
    await db.updateTable('apps').set({ owner_id: user.id }).where('id', 'in', [reader.appId, other.appId]).execute();
    for (const { appId } of [reader, other]) assert.ok(await t.database.stores.webhooks.add(appId, 'https://hooks.example.test/in', ['sleep.updated', 'grant.revoked'], t.clock(), { atMost: 10 }));
    const writer = await issueAccessToken(t, person, ['write_sleep']);
    const start = Math.floor(t.clock() / 60) * 60 - 10 * 3600;
    const night = await t.app.inject({
      method: 'POST', url: '/v1/users/me/sleep/', headers: { authorization: `Bearer ${writer.token}` },
      payload: { start_time: start, end_time: start + 3600, stages: [{ stage: 'light', start_time: start, end_time: start + 3600 }] },
    });
    assert.equal(night.statusCode, 200, night.body);
    await db.updateTable('webhook_deliveries').set({ state: 'succeeded' }).where('user_id', '=', person.id).execute();
    const left = async (appId: string) => ({
      feed: await feedTypes(appId, person.id),
      messages: (await db.selectFrom('webhook_deliveries as d').innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id').select('d.type').where('e.app_id', '=', appId).where('d.user_id', '=', person.id).execute()).map((row) => row.type).sort(),
    });
    assert.deepEqual(await left(reader.appId), { feed: ['sleep.updated'], messages: ['sleep.updated'] });

    assert.equal(await t.database.stores.grants.revokeForUser(person.id, reader.appId, t.clock()), true);
    assert.deepEqual(await left(reader.appId), { feed: ['grant.revoked'], messages: ['grant.revoked'] });
    assert.deepEqual(await left(other.appId), { feed: ['sleep.updated'], messages: ['sleep.updated'] }, 'another app of the person keeps its own');

    await t.database.stores.users.deleteAccount(person.id, t.clock());
    assert.deepEqual(await left(other.appId), { feed: ['grant.revoked'], messages: ['grant.revoked'] });
    const [revoked] = await eventRows(db, { appId: other.appId });
    assert.deepEqual(JSON.parse(revoked!.data), { user_id: person.id, reason: 'account_deleted' });
  });

  /** The types of an app's events in its feed (about one person when named), sorted. */
  const feedTypes = async (appId: string, userId?: string) => {
    return (await eventRows(t.database.db.kysely, { appId, ...(userId === undefined ? {} : { userId }) })).map((row) => row.type).sort();
  };
});
