/**
 * What every Fitbit-compatible route shares (src/api/fitbit/routes.ts): the profile in Fitbit's
 * shape, `{user-id}`, Fitbit's errors for tokens, scopes, dates and periods, and the hourly rate
 * limit with Fitbit's headers, counted by two servers together through Redis.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { buildApp } from '../../../src/app.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { SHARED_REDIS_URL, sharedRedisUnavailable } from '../../support/redis-server.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, issueAccessToken } from '../../support/tokens.js';
import { pageWith } from '../../support/feed.js';
import { fitbitErrorOf, fitbitGet, fitbitJson } from './fitbit-support.js';

const redisMissing = await sharedRedisUnavailable();

forEachDialect('Fitbit-compatible face', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(Date.UTC(2026, 10, 20, 12, 30) / 1000);
  });
  after(() => t.close());

  it('answers the profile in Fitbit\'s shape, leaving out what Stride does not hold', async () => {
    const user = await createUser(t, { timezone: 'Asia/Kolkata', displayName: 'Asha' });
    const { token } = await issueAccessToken(t, user, ['read_profile']);
    const { user: profile } = await fitbitJson<{ user: Record<string, unknown> }>(t, token, '/1/user/-/profile.json');
    assert.deepEqual(profile, {
      encodedId: user.id,
      displayName: 'Asha',
      fullName: 'Asha',
      timezone: 'Asia/Kolkata',
      offsetFromUTCMillis: 19_800_000,
      memberSince: '2026-11-20',
      strideLengthWalking: 75,
      strideLengthRunning: 75,
      strideLengthWalkingType: 'default',
      strideLengthRunningType: 'default',
      distanceUnit: 'METRIC',
      weightUnit: 'METRIC',
    });
    const inches = await fitbitJson<{ user: { strideLengthWalking: number } }>(t, token, `/1/user/${user.id}/profile.json`, { 'accept-language': 'en_US' });
    assert.equal(inches.user.strideLengthWalking, 29.5);
  });

  it('refuses another person\'s encodedId with 403 insufficient_permissions', async () => {
    const [me, other] = [await createUser(t), await createUser(t)];
    const { token } = await issueAccessToken(t, me, ALL_RESOURCE_SCOPES);
    for (const path of [`/1/user/${other.id}/profile.json`, `/1/user/${other.id}/activities/steps/date/today/7d.json`, '/1/user/someone/activities/heart/date/today/1d/1min.json']) {
      const response = await fitbitGet(t, token, path);
      assert.equal(response.statusCode, 403, path);
      assert.equal(fitbitErrorOf(response.body).errorType, 'insufficient_permissions');
    }
  });

  it('answers a missing scope with 403 insufficient_scope, naming it', async () => {
    const user = await createUser(t);
    const { token } = await issueAccessToken(t, user, ['read_profile']);
    for (const [path, scope] of [['/1/user/-/activities/steps/date/today/7d.json', 'read_activity'], ['/1/user/-/activities/heart/date/today/1d.json', 'read_heartrate']] as const) {
      const response = await fitbitGet(t, token, path);
      assert.equal(response.statusCode, 403);
      const error = fitbitErrorOf(response.body);
      assert.equal(error.errorType, 'insufficient_scope');
      assert.match(error.message, new RegExp(scope));
    }
    const { token: activityOnly } = await issueAccessToken(t, user, ['read_activity']);
    assert.equal((await fitbitGet(t, activityOnly, '/1/user/-/profile.json')).statusCode, 403);
  });

  it('tells an expired token (expired_token, which Fitbit clients answer by refreshing) from an unknown or revoked one (invalid_token)', async () => {
    const user = await createUser(t);
    const { token } = await issueAccessToken(t, user, ['read_profile'], 60);
    assert.equal((await fitbitGet(t, token, '/1/user/-/profile.json')).statusCode, 200);
    t.clock.advance(61);
    const expired = await fitbitGet(t, token, '/1/user/-/profile.json');
    assert.equal(expired.statusCode, 401);
    assert.equal(fitbitErrorOf(expired.body).errorType, 'expired_token');

    const { token: revoked, grantId } = await issueAccessToken(t, user, ['read_profile']);
    await t.database.db.kysely.deleteFrom('access_tokens').where('grant_id', '=', grantId).execute();
    for (const headers of [bearer(revoked), bearer('made-up'), {}]) {
      const response = await t.app.inject({ method: 'GET', url: '/1/user/-/profile.json', headers });
      assert.equal(response.statusCode, 401);
      assert.equal(fitbitErrorOf(response.body).errorType, 'invalid_token');
      assert.match(String(response.headers['www-authenticate']), /^Bearer realm="stride"/);
    }
  });

  it('answers bad dates, periods, ranges, detail levels and resources in Fitbit\'s shape', async () => {
    const user = await createUser(t);
    const { token } = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES);
    const cases: Array<[string, number, string, string]> = [
      ['/1/user/-/activities/steps/date/2026-13-01/7d.json', 400, 'validation', 'date'],
      ['/1/user/-/activities/steps/date/yesterday/7d.json', 400, 'validation', 'date'],
      ['/1/user/-/activities/steps/date/today/2w.json', 400, 'validation', 'period'],
      ['/1/user/-/activities/steps/date/2026-11-20/2026-11-19.json', 400, 'validation', 'end-date'],
      ['/1/user/-/activities/steps/date/2020-01-01/2026-11-19.json', 400, 'validation', 'end-date'],
      ['/1/user/-/activities/heart/date/today/1y.json', 400, 'validation', 'period'],
      ['/1/user/-/activities/steps/date/today/1d/1sec.json', 400, 'validation', 'detail-level'],
      ['/1/user/-/activities/heart/date/today/1d/1min/time/25:00/26:00.json', 400, 'validation', 'start-time'],
      ['/1/user/-/activities/floors/date/today/7d.json', 404, 'not_found', 'resource'],
    ];
    for (const [path, status, errorType, fieldName] of cases) {
      const response = await fitbitGet(t, token, path);
      assert.equal(response.statusCode, status, `${path}: ${response.body}`);
      assert.deepEqual({ ...fitbitErrorOf(response.body), message: '' }, { errorType, fieldName, message: '' }, path);
    }
  });

  it('lists the apps that write the person\'s data as trackers, with when each last used its grant', async () => {
    const user = await createUser(t, { timezone: 'Europe/Berlin' });
    const writer = await issueAccessToken(t, user, ['write_activity', 'read_activity']);
    await issueAccessToken(t, user, ['read_profile']);
    t.clock.set(Date.UTC(2026, 10, 20, 13, 0) / 1000);
    assert.equal((await fitbitGet(t, writer.token, '/1/user/-/activities/steps/date/today/1d.json')).statusCode, 200);
    // The request records the grant's use after its answer.
    await pageWith(() => t.database.db.kysely.selectFrom('grants').select('last_used_at').where('id', '=', writer.grantId).executeTakeFirstOrThrow(), (grant) => grant.last_used_at !== null);
    const devices = await fitbitJson<Array<Record<string, unknown>>>(t, writer.token, '/1/user/-/devices.json');
    const app = await t.database.stores.apps.findById(writer.appId);
    assert.deepEqual(devices, [{ deviceVersion: 'Test App', features: [], id: app!.clientId, lastSyncTime: '2026-11-20T14:00:00.000', type: 'TRACKER' }]);
    const { token: writeOnly } = await issueAccessToken(t, user, ['write_body']);
    const refused = await fitbitGet(t, writeOnly, '/1/user/-/devices.json');
    assert.deepEqual([refused.statusCode, fitbitErrorOf(refused.body).errorType], [403, 'insufficient_scope']);
  });

  it('counts each person and app\'s requests in the clock hour, in Fitbit\'s headers, and answers 429 when they are spent — two servers sharing one count through Redis', { skip: redisMissing ?? false }, async () => {
    const env = { RATE_LIMIT: 'on', FITBIT_RATE_LIMIT: '3', REDIS_URL: SHARED_REDIS_URL };
    const limited = await createTestApp(dialect, env);
    const second = await buildApp({ config: limited.config, stores: limited.database.stores, clock: limited.clock });
    try {
      limited.clock.set(Date.UTC(2026, 10, 20, 12, 50) / 1000);
      const user = await createUser(limited);
      const { token } = await issueAccessToken(limited, user, ['read_profile']);
      const get = (app: typeof second) => app.inject({ method: 'GET', url: '/1/user/-/profile.json', headers: bearer(token) });
      const answers = [await get(limited.app), await get(second), await get(limited.app), await get(second)];
      assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200, 429]);
      assert.deepEqual(answers.map((a) => a.headers['fitbit-rate-limit-remaining']), ['2', '1', '0', '0']);
      for (const answer of answers) {
        assert.equal(answer.headers['fitbit-rate-limit-limit'], '3');
        assert.equal(answer.headers['fitbit-rate-limit-reset'], '600', 'seconds to the top of the hour');
      }
      assert.equal(answers[3]!.headers['retry-after'], '600');
      assert.equal(fitbitErrorOf(answers[3]!.body).errorType, 'system');
      // Another app of the same person has its own count; the next hour starts afresh.
      const { token: otherApp } = await issueAccessToken(limited, user, ['read_profile']);
      assert.equal((await limited.app.inject({ method: 'GET', url: '/1/user/-/profile.json', headers: bearer(otherApp) })).statusCode, 200);
      limited.clock.advance(600);
      const nextHour = await get(limited.app);
      assert.equal(nextHour.statusCode, 200);
      assert.equal(nextHour.headers['fitbit-rate-limit-remaining'], '2');
      assert.equal(nextHour.headers['fitbit-rate-limit-reset'], '3600');
    } finally {
      await second.close();
      await limited.close();
    }
  });
});
