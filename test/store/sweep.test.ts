/** The sweeper (src/store/sweep.ts): what it deletes, in bounded batches, and that requests keep being answered meanwhile. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { sweepExpired } from '../../src/store/sweep.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { eventRows, insertEventRows } from '../support/events.js';
import { bearer, createUser, issueAccessToken, type IssuedToken, type TestUser } from '../support/tokens.js';

forEachDialect('sweeping expired rows', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  let live: IssuedToken;
  before(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t);
    live = await issueAccessToken(t, user, ['read_profile'], 3600);
  });
  after(() => t.close());

  /** `count` access tokens of the live grant, expired at `expiresAt`, written in one statement. */
  const expiredTokens = async (count: number, expiresAt: number, prefix: string) => {
    const series = dialect === 'postgres'
      ? sql`select generate_series(1, ${count}) as n`
      : sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${count}) select n from s`;
    await sql`insert into access_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at)
      select ${prefix} || n, 'f', ${live.grantId}, ${live.appId}, ${user.id}, 'read_profile', ${expiresAt}, ${expiresAt - 60} from (${series}) as s`.execute(t.database.db.kysely);
  };

  it('deletes expired codes, tokens and sessions, old events and finished deliveries, and keeps the rest', async () => {
    const db = t.database.db.kysely;
    const now = t.clock();
    const expired = await issueAccessToken(t, user, ['read_profile'], 10);
    const refresh = (hash: string, expiresAt: number, rotatedAt: number | null) => ({
      token_key: hash, family_id: 'f', grant_id: live.grantId, app_id: live.appId, user_id: user.id, scope: 'read_profile',
      expires_at: expiresAt, created_at: now, rotated_at: rotatedAt, replay_response: null,
    });
    await db.insertInto('refresh_tokens').values([
      refresh('old-refresh', now + 10, null),
      refresh('live-refresh', now + 86400, null),
      refresh('rotated-refresh', now + 86400, now),
    ]).execute();
    const code = (hash: string, expiresAt: number) => ({
      code_hash: hash, app_id: live.appId, user_id: user.id, grant_id: live.grantId, redirect_uri: 'https://app.example.test/callback',
      scope: 'read_profile', code_challenge: null, code_challenge_method: null, expires_at: expiresAt, consumed_at: null, created_at: now,
    });
    await db.insertInto('authorization_codes').values([code('old-code', now + 10), code('live-code', now + 600)]).execute();
    const device = (hash: string, expiresAt: number) => ({
      device_code_hash: hash, user_code_hash: `user-${hash}`, app_id: live.appId, scope: 'read_profile', status: 'pending' as const,
      user_id: null, grant_id: null, poll_interval: 5, last_polled_at: null, expires_at: expiresAt, created_at: now,
    });
    await db.insertInto('device_codes').values([device('old-device', now + 10), device('live-device', now + 600)]).execute();
    // A session's row stays a day past its end (whose a form sent late was, docs/web.md).
    await db.insertInto('sessions').values([
      { id_hash: 'old-session', user_id: user.id, csrf_secret: 'x', created_at: now - 86400, expires_at: now + 10 - 86400 },
      { id_hash: 'ended-session', user_id: user.id, csrf_secret: 'z', created_at: now - 86400, expires_at: now + 10 },
      { id_hash: 'live-session', user_id: user.id, csrf_secret: 'y', created_at: now, expires_at: now + 86400 },
    ]).execute();
    const event = (createdAt: number) => ({ app_id: live.appId, type: 'steps.updated', user_id: user.id, data: {}, created_at: createdAt });
    // Two days old, this minute's past retention, within it.
    const [daysOld, old, kept] = await insertEventRows(db, [event(now - 2 * 86_400), event(now - 100), event(now)]);
    // DPoP proof identifiers go once their iat window is over (oauth/dpop.ts).
    await db.insertInto('dpop_proofs').values([{ proof_key: 'old-proof', expires_at: now + 10 }, { proof_key: 'live-proof', expires_at: now + 61 }]).execute();

    const first = await sweepExpired(db, dialect, now, now - 50);
    // PostgreSQL drops events a whole day at a time: the one of this day waits for its day to pass
    // (test/store/postgres/partitions.test.ts); the older one, in no day's partition, goes alone.
    const events = dialect === 'sqlite' ? 2 : 1;
    assert.deepEqual(first.deleted, { authorization_codes: 0, device_codes: 0, access_tokens: 0, refresh_tokens: 0, dpop_proofs: 0, sessions: 0, events, webhook_deliveries: 0, pushed_authorization_requests: 0, ended_access_tokens: 0, password_resets: 0 });
    const second = await sweepExpired(db, dialect, now + 11, now - 50);
    assert.deepEqual(second.deleted, { authorization_codes: 1, device_codes: 1, access_tokens: 1, refresh_tokens: 1, dpop_proofs: 1, sessions: 1, events: 0, webhook_deliveries: 0, pushed_authorization_requests: 0, ended_access_tokens: 0, password_resets: 0 });
    assert.deepEqual((await db.selectFrom('dpop_proofs').select('proof_key').execute()).map((r) => r.proof_key), ['live-proof']);
    assert.deepEqual((await db.selectFrom('authorization_codes').select('code_hash').execute()).map((r) => r.code_hash), ['live-code']);
    assert.deepEqual((await db.selectFrom('refresh_tokens').select('token_key').orderBy('token_key').execute()).map((r) => r.token_key), ['live-refresh', 'rotated-refresh'], 'a rotated token stays until its own expiry');
    assert.deepEqual((await db.selectFrom('sessions').select('id_hash').orderBy('id_hash').execute()).map((r) => r.id_hash), ['ended-session', 'live-session'], 'a session ended less than a day ago stays');
    const left = (await eventRows(db, { appId: live.appId })).map((r) => r.id);
    assert.deepEqual(left, dialect === 'sqlite' ? [kept] : [old, kept]);
    assert.ok(!left.includes(daysOld!));
    assert.equal(await db.selectFrom('access_tokens').select('token_key').where('token_key', '=', expired.token).executeTakeFirst(), undefined);
  });

  it('goes through 100,000 expired rows in batches of 1,000 while requests keep being answered between them', async () => {
    const now = t.clock();
    await expiredTokens(100_000, now - 1, 'bulk-');
    // The sweeper's batches that deleted rows, counted as each one's result comes back (a Kysely
    // plugin on the sweeper's own handle); each answered request notes how many had by then.
    let statements = 0;
    let batches = 0;
    const sweeperDb = t.database.db.kysely.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        // Deletes only: the partitions' upkeep on PostgreSQL (lookups and DDL) is not a batch.
        if (args.result.numAffectedRows !== undefined) statements++;
        if (Number(args.result.numAffectedRows ?? 0n) > 0) batches++;
        return args.result;
      },
    });
    const answeredAfter: number[] = [];
    let sweeping = true;
    const requests = (async () => {
      while (sweeping) {
        const response = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(live.token) });
        assert.equal(response.statusCode, 200);
        answeredAfter.push(batches);
      }
    })();
    const result = await sweepExpired(sweeperDb, dialect, now, 0);
    sweeping = false;
    await requests;
    assert.equal(result.deleted.access_tokens, 100_000);
    assert.ok(result.batches >= 100, `${result.batches} batches`);
    assert.equal(statements, result.batches);
    assert.equal(batches, 100);
    const during = answeredAfter.filter((count) => count < batches);
    assert.ok(during.length >= 50, `requests were answered during the sweep (${during.length})`);
    // One batch at a time holds the writer: requests are answered between the batches all along the
    // sweep, never only before or after a long run of them. Counted in batches, not in
    // milliseconds, so that a loaded machine slows both sides alike.
    const marks = [0, ...during, batches];
    const longestRun = Math.max(...marks.slice(1).map((count, i) => count - marks[i]!));
    assert.ok(longestRun <= 10, `${longestRun} batches in a row went by with no request answered`);
  });

  if (dialect === 'postgres') {
    it('shares the work between sweepers running at once, each row deleted once', async () => {
      const now = t.clock();
      await expiredTokens(20_000, now - 1, 'shared-');
      const results = await Promise.all([0, 1, 2].map(() => sweepExpired(t.database.db.kysely, dialect, now, 0, { pauseMs: 0 })));
      assert.equal(results.reduce((sum, r) => sum + r.deleted.access_tokens, 0), 20_000);
      const left = await t.database.db.kysely.selectFrom('access_tokens').select('token_key').where('expires_at', '<=', now).execute();
      assert.deepEqual(left, []);
    });
  }
});
