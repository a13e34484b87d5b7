/**
 * The resource API's reads and writes (store/bearer-lookup.ts, store/profiles.ts,
 * store/step-series.ts): the same answers as the rules they implement, on both dialects, and
 * nothing about a token's validity remembered between calls.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { lastIndexAtOrBefore, planBuckets } from '../../src/calendar/step-buckets.js';
import { tokenKey } from '../../src/security/secrets.js';
import type { BearerLookup } from '../../src/store/bearer-lookup.js';
import { createStepSeriesReader, seriesRequestOf } from '../../src/domain/step-series.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser, issueAccessToken, type TestUser } from '../support/tokens.js';

const DAY = 86_400;

/** The steps.updated event of an upload, which no app here hears of. */
const UNHEARD_UPLOAD = { ranges: [], dates: [], now: 0, coalesceSeconds: 0 };

forEachDialect('resource API hot paths', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  let lookup: BearerLookup;

  before(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t, { displayName: 'Hot Path', timezone: 'Europe/Berlin' });
    lookup = t.database.stores.bearer;
  });
  after(() => t.close());

  const find = async (token: string) => lookup.find(tokenKey(token), t.clock());

  it('finds a live token with its grant and its user\u2019s profile', async () => {
    const issued = await issueAccessToken(t, user, ['read_profile', 'read_activity']);
    const grant = await find(issued.token);
    assert.ok(grant);
    assert.equal(grant.userId, user.id);
    assert.equal(grant.appId, issued.appId);
    assert.equal(grant.grantId, issued.grantId);
    assert.deepEqual([...grant.scopes].sort(), ['read_activity', 'read_profile']);
    assert.equal(grant.expiresAt, t.clock() + 3600);
    assert.equal(grant.grantLastUsedAt, null);
    assert.deepEqual(grant.profile, {
      id: user.id,
      display_name: 'Hot Path',
      timezone: 'Europe/Berlin',
      daily_step_goal: 10000,
      stride_length_cm: null,
      birth_year: null,
      max_heart_rate: null,
      created_at: t.clock(),
    });
    assert.equal(await find(`${issued.token}x`), undefined, 'another token is unknown');
  });

  it('sees a token that expired, was deleted or whose grant was revoked as invalid on the next call', async () => {
    const db = t.database.db.kysely;
    const expiring = await issueAccessToken(t, user, ['read_profile'], 60);
    assert.ok(await find(expiring.token));
    t.clock.advance(60);
    assert.equal(await find(expiring.token), undefined, 'expired at expires_at');
    t.clock.advance(-60);

    const revoked = await issueAccessToken(t, user, ['read_profile']);
    assert.ok(await find(revoked.token));
    await db.deleteFrom('access_tokens').where('token_key', '=', tokenKey(revoked.token)).execute();
    assert.equal(await find(revoked.token), undefined, 'token row deleted');

    const grantRevoked = await issueAccessToken(t, user, ['read_profile']);
    assert.ok(await find(grantRevoked.token));
    await db.deleteFrom('grants').where('id', '=', grantRevoked.grantId).execute();
    assert.equal(await find(grantRevoked.token), undefined, 'grant deleted');

    const appDeleted = await issueAccessToken(t, user, ['read_profile']);
    assert.ok(await find(appDeleted.token));
    await db.deleteFrom('apps').where('id', '=', appDeleted.appId).execute();
    assert.equal(await find(appDeleted.token), undefined, 'app deleted');
  });

  it('answers checks asked together each with its own token and clock', async () => {
    const other = await createUser(t, { displayName: 'Other' });
    const mine = await issueAccessToken(t, user, ['read_profile']);
    const theirs = await issueAccessToken(t, other, ['read_activity']);
    const expiring = await issueAccessToken(t, user, ['read_profile'], 60);
    const now = t.clock();
    const asked: Array<[token: string, now: number]> = [
      [mine.token, now],
      [theirs.token, now],
      [`${mine.token}x`, now],
      [expiring.token, now + 59],
      [expiring.token, now + 60], // the same token, read by a later clock: expired for this caller only
      [mine.token, now],
      ...Array.from({ length: 300 }, (_, i): [string, number] => [i % 2 ? mine.token : theirs.token, now]), // more than one statement holds
    ];
    const answers = await Promise.all(asked.map(([token, at]) => lookup.find(tokenKey(token), at)));
    assert.deepEqual(answers.slice(0, 6).map((grant) => grant?.profile.display_name), ['Hot Path', 'Other', undefined, 'Hot Path', undefined, 'Hot Path']);
    assert.deepEqual(answers.slice(0, 2).map((grant) => grant?.grantId), [mine.grantId, theirs.grantId]);
    assert.ok(answers.slice(6).every((grant, i) => grant?.userId === (i % 2 ? user.id : other.id)));
  });

  it('a check the database cannot read fails alone, not the checks asked with it', async () => {
    const mine = await issueAccessToken(t, user, ['read_profile']);
    const now = t.clock();
    // A NUL is refused by PostgreSQL in a text value (SQLite stores it): the batch's statement
    // fails, and each check is asked again alone.
    const answers = await Promise.allSettled([tokenKey(mine.token), 'unreadable\u0000key', tokenKey(mine.token)].map((key) => lookup.find(key, now)));
    assert.deepEqual([answers[0]!, answers[2]!].map((a) => a.status === 'fulfilled' && a.value?.grantId), [mine.grantId, mine.grantId]);
    assert.ok(answers[1]!.status === 'rejected' || answers[1]!.value === undefined);
  });

  it('sees the token of a deleted user as invalid', async () => {
    const doomed = await createUser(t);
    const issued = await issueAccessToken(t, doomed, ['read_profile']);
    assert.ok(await find(issued.token));
    await t.database.db.kysely.deleteFrom('users').where('id', '=', doomed.id).execute();
    assert.equal(await find(issued.token), undefined);
  });

  it('records when the grant was last used', async () => {
    const issued = await issueAccessToken(t, user, ['read_profile']);
    await lookup.touch(issued.grantId, t.clock() + 5);
    assert.equal((await find(issued.token))?.grantLastUsedAt, t.clock() + 5);
  });

  it('changes only the given profile fields and returns the profile after the change', async () => {
    const update = t.database.stores.users.updateProfile;
    const issued = await issueAccessToken(t, user, ['read_profile']);
    const before = (await find(issued.token))!.profile;
    const now = t.clock() + 100;

    // Quotes, commas, backslashes and characters outside the BMP come back as they were stored.
    const renamed = await update(user.id, { display_name: 'Zoë "Z" O\'Neil, \\ 🏃 \u2028' }, now);
    assert.deepEqual(renamed, { ...before, display_name: 'Zoë "Z" O\'Neil, \\ 🏃 \u2028' });
    assert.deepEqual((await find(issued.token))?.profile, renamed, 'the next lookup sees it');

    const changed = await update(user.id, { timezone: 'Asia/Kolkata', daily_step_goal: 0, stride_length_cm: 72 }, now);
    assert.deepEqual(changed, { ...renamed, timezone: 'Asia/Kolkata', daily_step_goal: 0, stride_length_cm: 72 });
    const cleared = await update(user.id, { stride_length_cm: null }, now + 60); // the stride may change once a minute
    assert.deepEqual(cleared, { ...changed, stride_length_cm: null });
    assert.deepEqual((await find(issued.token))?.profile, cleared);
    // What heart-rate zones count from comes with the token too.
    const hearty = await update(user.id, { birth_year: 1984, max_heart_rate: 188 }, now + 60);
    assert.deepEqual(hearty, { ...cleared, birth_year: 1984, max_heart_rate: 188 });
    assert.deepEqual((await find(issued.token))?.profile, hearty);
    const unset = await update(user.id, { birth_year: null, max_heart_rate: null }, now + 60);
    assert.deepEqual((await find(issued.token))?.profile, unset);
    assert.deepEqual(unset, cleared);

    const row = await t.database.db.kysely.selectFrom('users').select(['updated_at', 'daily_step_goal', 'stride_length_cm']).where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.deepEqual({ ...row, updated_at: Number(row.updated_at) }, { updated_at: now + 60, daily_step_goal: 0, stride_length_cm: null });
    assert.equal(await update('no-such-user', { display_name: 'X' }, now), undefined);
  });

  it('sums a series as the minutes add up, each user only their own', async () => {
    const stepper = await createUser(t);
    const start = Date.UTC(2024, 2, 20) / 1000; // spans the DST change of 2024-03-31 in Europe
    const samples = [];
    for (let time = start, i = 0; time < start + 20 * DAY; time += 60 * 7, i++) samples.push({ start_time: time - (time % 60), value: (i * 13) % 90 });
    await t.database.stores.steps.upsertSamples(stepper.id, samples, UNHEARD_UPLOAD);
    const sums = t.database.stores.steps.sums;
    const cases: Array<[string, 'minute' | 'hour' | 'day', number, number]> = [
      ['UTC', 'day', start, start + 20 * DAY],
      ['Europe/Berlin', 'day', start, start + 20 * DAY],
      ['Europe/Berlin', 'hour', start + 10 * DAY, start + 12 * DAY],
      ['Asia/Kolkata', 'day', start, start + 20 * DAY],
      ['Asia/Kathmandu', 'hour', start, start + 3 * DAY],
      ['America/New_York', 'minute', start + 5 * DAY, start + 6 * DAY],
      ['UTC', 'day', start + 30 * DAY, start + 31 * DAY],
      ['Asia/Kolkata', 'hour', start, start + 20 * DAY],
      ['America/St_Johns', 'day', start, start + 20 * DAY],
      ['America/New_York', 'day', start - 3 * DAY, start + 25 * DAY],
      ['Australia/Lord_Howe', 'day', start, start + 20 * DAY],
      ['Pacific/Chatham', 'day', start + 3600, start + 19 * DAY + 900],
    ];
    // Missing and 0 both mean no steps; a bucket whose corrections cancel out holds 0.
    const dense = (sums: readonly number[], plan: { boundaries: number[] }) => Array.from({ length: plan.boundaries.length - 1 }, (_, i) => sums[i] ?? 0);
    for (const [zone, granularity, from, to] of cases) {
      const plan = planBuckets(zone, granularity, from, to);
      // Reference: every stored minute added to the bucket it starts in.
      const reference: number[] = [];
      for (const sample of samples) {
        const index = lastIndexAtOrBefore(plan.boundaries, sample.start_time);
        if (index >= 0 && index < plan.boundaries.length - 1) reference[index] = (reference[index] ?? 0) + sample.value;
      }
      const expected = dense(reference, plan);
      assert.deepEqual(dense(await sums(stepper.id, plan), plan), expected, `${zone} ${granularity}`);
      assert.deepEqual(dense(await sums(stepper.id, plan), plan), expected, `${zone} ${granularity}, prepared statement reused`);
    }
    // Asked for together (on PostgreSQL, series of one shape share a statement): each gets its own
    // rows — the same series again, and another user's (none) of the same shape.
    const idle = await createUser(t);
    const plans = cases.map(([zone, granularity, from, to]) => planBuckets(zone, granularity, from, to));
    const alone = await Promise.all(plans.map(async (plan) => dense(await sums(stepper.id, plan), plan)));
    const together = await Promise.all(
      plans.flatMap((plan) => [stepper.id, idle.id, stepper.id].map(async (userId) => dense(await sums(userId, plan), plan))),
    );
    plans.forEach((plan, i) => {
      assert.deepEqual(together.slice(3 * i, 3 * i + 3), [alone[i], dense([], plan), alone[i]], `${cases[i]!.join(' ')} asked for together`);
    });
    // A user id is a value, never SQL: one that reads as SQL finds no steps, not everyone's.
    const hostile = "user-b' or 1=1 --";
    for (const plan of plans) {
      assert.deepEqual(dense(await sums(hostile, plan), plan), dense([], plan));
    }
    const total = (await sums(stepper.id, planBuckets('UTC', 'day', start, start + 20 * DAY))).reduce((a, b) => a + (b ?? 0), 0);
    assert.equal(total, samples.reduce((a, s) => a + s.value, 0));
  });

  it('answers the same request for each user from their own steps, seeing each upload, however many requests came before', async () => {
    const read = createStepSeriesReader(t.database.stores.steps.sums);
    const [walker, sitter] = [await createUser(t), await createUser(t)];
    const start = Date.UTC(2024, 9, 1) / 1000;
    const request = seriesRequestOf({ start_time: start, end_time: start + 7 * DAY, timezone: 'Europe/Berlin' }, 'UTC', start);
    const totals = async () => [(await read(walker.id, request)).total, (await read(sitter.id, request)).total];
    assert.deepEqual(await totals(), [0, 0]);
    await t.database.stores.steps.upsertSamples(walker.id, [{ start_time: start + 3 * DAY, value: 70 }], UNHEARD_UPLOAD);
    assert.deepEqual(await totals(), [70, 0], 'an upload is seen by the next read of the same series');
    await t.database.stores.steps.upsertSamples(sitter.id, [{ start_time: start + DAY - 3600, value: 5 }], UNHEARD_UPLOAD);
    assert.deepEqual(await totals(), [70, 5], 'each user gets their own steps');
    // More distinct requests than the reader keeps plans for: it starts over, answers stay right.
    for (let day = 0; day < 300; day++) {
      const from = start - day * DAY;
      const series = await read(walker.id, seriesRequestOf({ start_time: from, end_time: from + 7 * DAY }, 'UTC', start));
      assert.equal(series.total, day < 4 ? 70 : 0, `7 days from day -${day}`);
    }
    assert.deepEqual(await totals(), [70, 5]);
  });
});
