import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, issueAccessToken, userWithToken } from '../support/tokens.js';
import { utc } from './steps-support.js';
import { eventsOf, night, postSession, readSleep, SLEEP, type SessionBody } from './sleep-support.js';

forEachDialect('sleep sessions', (dialect) => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 11, 20, 12));
  });
  after(() => t.close());

  const post = (token: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url: SLEEP, headers: bearer(token), payload: payload as object });
  const del = (token: string, id: string) => t.app.inject({ method: 'DELETE', url: `${SLEEP}/${id}`, headers: bearer(token) });
  const get = (token: string, query: string) => t.app.inject({ method: 'GET', url: `${SLEEP}/?${query}`, headers: bearer(token) });

  it('stores a night across midnight and reads it back under the date it ends on', async () => {
    const { token } = await userWithToken(t);
    const body = night(utc(2024, 6, 9, 23, 10), [['awake', 12], ['light', 95], ['deep', 40], ['rem', 30], ['light', 120], ['awake', 3], ['rem', 25]]);
    const stored = await postSession(t, token, body);
    assert.match(stored.id, /^slp_[A-Za-z0-9_-]{14}$/);
    assert.deepEqual(stored, { id: stored.id, date: '2024-06-10', ...body, minutes_asleep: 95 + 40 + 30 + 120 + 25, minutes_awake: 15 });
    const before = await readSleep(t, token, { start_date: '2024-06-09', end_date: '2024-06-09' });
    assert.deepEqual(before, { timezone: 'UTC', sleep: [] });
    assert.deepEqual(await readSleep(t, token, { start_date: '2024-06-10', end_date: '2024-06-10' }), { timezone: 'UTC', sleep: [stored] });
    const noSlash = await t.app.inject({ method: 'GET', url: `${SLEEP}?start_date=2024-06-01&end_date=2024-06-30`, headers: bearer(token) });
    assert.deepEqual(noSlash.json().sleep, [stored]);
  });

  it('keeps stage boundaries at any second, and rounds the minutes', async () => {
    const { token } = await userWithToken(t);
    const start = utc(2024, 6, 20, 22) + 17;
    const body = {
      start_time: start,
      end_time: start + 3 * 3600 + 45,
      stages: [
        { stage: 'light', start_time: start, end_time: start + 30 },
        { stage: 'awake', start_time: start + 30, end_time: start + 119 },
        { stage: 'deep', start_time: start + 119, end_time: start + 3 * 3600 + 45 },
      ],
    } as SessionBody;
    const stored = await postSession(t, token, body);
    assert.deepEqual(stored.stages, body.stages);
    // 30 s light + 10,726 s deep = 179.27 minutes asleep; 89 s awake = 1.48 minutes.
    assert.equal(stored.minutes_asleep, 179);
    assert.equal(stored.minutes_awake, 1);
  });

  it('dates sessions by the local clock: both DST nights in Europe/Berlin, and Asia/Kolkata', async () => {
    const { token } = await userWithToken(t, { timezone: 'Europe/Berlin' });
    // 30 March 2024 22:00 CET to 31 March 07:00 CEST: eight hours, the clocks went forward.
    const spring = await postSession(t, token, night(utc(2024, 3, 30, 21), [['light', 240], ['deep', 120], ['rem', 120]]));
    assert.equal(spring.date, '2024-03-31');
    assert.equal(spring.end_time, utc(2024, 3, 31, 5));
    // 26 October 2024 23:00 CEST to 27 October 07:00 CET: nine hours, the clocks went back.
    const autumn = await postSession(t, token, night(utc(2024, 10, 26, 21), [['light', 300], ['awake', 30], ['rem', 210]]));
    assert.equal(autumn.date, '2024-10-27');
    assert.equal(autumn.minutes_asleep + autumn.minutes_awake, 540);
    // A session that ends at 00:30 CEST on 26 October belongs to the 26th in Berlin, the 25th in UTC.
    const late = await postSession(t, token, night(utc(2024, 10, 25, 21, 30), [['awake', 60]]));
    assert.equal(late.date, '2024-10-26');
    const berlinDay = await readSleep(t, token, { start_date: '2024-03-31', end_date: '2024-03-31' });
    assert.deepEqual(berlinDay, { timezone: 'Europe/Berlin', sleep: [spring] });
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-10-27', end_date: '2024-10-27' })).sleep.map((s) => s.id), [autumn.id]);
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-03-30', end_date: '2024-03-30' })).sleep, []);
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-10-26', end_date: '2024-10-26' })).sleep.map((s) => s.id), [late.id]);

    // In Kolkata (UTC+05:30) a nap from 20:30 to 00:30 local ends on the next local date.
    const nap = await postSession(t, token, night(utc(2024, 6, 10, 15), [['light', 120], ['deep', 120]]));
    assert.equal(nap.date, '2024-06-10', 'the profile\u2019s zone (Berlin) dates the answer to the POST');
    const kolkata = await readSleep(t, token, { start_date: '2024-06-11', end_date: '2024-06-11', timezone: 'Asia/Kolkata' });
    assert.equal(kolkata.timezone, 'Asia/Kolkata');
    assert.deepEqual(kolkata.sleep.map((s) => [s.id, s.date]), [[nap.id, '2024-06-11']]);
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-06-10', end_date: '2024-06-10', timezone: 'asia/kolkata' })).sleep, []);
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-06-10', end_date: '2024-06-10', timezone: 'UTC' })).sleep.map((s) => s.date), ['2024-06-10']);
  });

  it('answers the last 7 local dates by default, oldest first', async () => {
    const { token } = await userWithToken(t);
    const today = utc(2024, 11, 20);
    const sessions = [];
    for (const daysAgo of [7, 6, 3, 0]) sessions.push(await postSession(t, token, night(today - daysAgo * 86_400 + 3600, [['light', 120]])));
    const found = await readSleep(t, token);
    assert.deepEqual(found.sleep.map((s) => s.date), ['2024-11-14', '2024-11-17', '2024-11-20']);
    assert.deepEqual(found.sleep.map((s) => s.id), sessions.slice(1).map((s) => s.id));
    const upTo = await readSleep(t, token, { end_date: '2024-11-17' });
    assert.deepEqual(upTo.sleep.map((s) => s.date), ['2024-11-13', '2024-11-14', '2024-11-17']);
  });

  it('replaces a session sent again with the same start_time, keeping its id', async () => {
    const { user, token } = await createAndToken();
    const start = utc(2024, 7, 1, 22);
    const first = await postSession(t, token, night(start, [['light', 300]]));
    const second = await postSession(t, token, night(start, [['deep', 200], ['rem', 220]]));
    assert.equal(second.id, first.id);
    assert.equal(second.date, '2024-07-02');
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-07-01', end_date: '2024-07-03' })).sleep, [second]);
    const rows = await t.database.db.kysely.selectFrom('sleep_sessions').select('end_time').where('user_id', '=', user.id).execute();
    assert.deepEqual(rows.map((r) => Number(r.end_time)), [start + 420 * 60]);
  });

  it('refuses a session that overlaps another with 409, writing nothing; touching ends are no overlap', async () => {
    const { token } = await userWithToken(t);
    const start = utc(2024, 8, 1, 22);
    const stored = await postSession(t, token, night(start, [['light', 480]]));
    for (const [from, minutes] of [[-60, 61], [479, 30], [60, 30], [-30, 600]] as const) {
      const response = await post(token, night(start + from * 60, [['rem', minutes]]));
      assert.equal(response.statusCode, 409, `${from} ${minutes}`);
      assert.equal(response.json().error, 'conflict');
      assert.match(response.json().error_description, new RegExp(`overlaps the stored session ${stored.id}`));
    }
    // A replacement (same start) that would now overlap the next session is refused too.
    const next = await postSession(t, token, night(start + 480 * 60, [['awake', 30]]));
    const longer = await post(token, night(start, [['light', 481]]));
    assert.equal(longer.statusCode, 409);
    assert.match(longer.json().error_description, new RegExp(next.id));
    const before = await postSession(t, token, night(start - 60 * 60, [['awake', 60]]));
    assert.deepEqual((await readSleep(t, token, { start_date: '2024-08-01', end_date: '2024-08-02' })).sleep.map((s) => s.id), [before.id, stored.id, next.id]);
  });

  it('shows an app without read_sleep no stored session but the one it sent: not in a 409, not in a DELETE answer', async () => {
    const { user, token: reader } = await userWithToken(t);
    const { token: writer } = await issueAccessToken(t, user, ['write_sleep']);
    const start = utc(2024, 8, 10, 22);
    const stored = await postSession(t, reader, night(start, [['light', 200], ['deep', 100]]));
    // A whole day over the night: refused, without the night's id or times.
    const overlapping = await post(writer, night(start - 12 * 3600, [['light', 24 * 60]]));
    assert.equal(overlapping.statusCode, 409);
    const description = overlapping.json().error_description as string;
    assert.match(description, /^the session overlaps the stored session; delete that one first/);
    for (const secret of [stored.id, String(stored.start_time), String(stored.end_time)]) assert.ok(!description.includes(secret), description);
    // The writer's own session back when it deletes it: the id it knows, nothing more.
    const own = await postSession(t, writer, night(start + 600 * 60, [['awake', 20]]));
    const deleted = await del(writer, own.id);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(deleted.json(), { id: own.id, deleted: true });
    assert.equal((await readSleep(t, reader, { start_date: '2024-08-11', end_date: '2024-08-11' })).sleep.length, 1, 'the night is still there');
  });

  it('lets only one of two overlapping sessions sent at the same moment in', async () => {
    const { token } = await userWithToken(t);
    for (let round = 0; round < 6; round++) {
      const start = utc(2024, 9, 1 + round, 22);
      const responses = await Promise.all([post(token, night(start, [['light', 400]])), post(token, night(start + 600 + round, [['deep', 400]]))]);
      assert.deepEqual(responses.map((r) => r.statusCode).sort(), [200, 409], responses.map((r) => r.body).join(' '));
      const day = new Date((start + 86_400) * 1000).toISOString().slice(0, 10);
      assert.equal((await readSleep(t, token, { start_date: day, end_date: day })).sleep.length, 1);
    }
  });

  it('deletes a session of the token\u2019s user by id, and answers 404 for anyone else\u2019s or an unknown one', async () => {
    const alice = await userWithToken(t);
    const bob = await userWithToken(t);
    const body = night(utc(2024, 5, 5, 23), [['light', 100]]);
    const session = await postSession(t, alice.token, body);
    for (const id of [session.id, 'slp_AAAAAAAAAAAAAA', 'nope', session.id.replace('slp_', 'wgt_'), `${session.id}x`, session.id.slice(0, -1)]) {
      const response = await del(bob.token, encodeURIComponent(id));
      assert.equal(response.statusCode, 404, id);
      assert.deepEqual(response.json(), { error: 'not_found', error_description: 'no such sleep session of this user' });
    }
    const range = { start_date: '2024-05-06', end_date: '2024-05-06' };
    assert.deepEqual((await readSleep(t, alice.token, range)).sleep, [session]);
    // Bob's own session at the same start has another id.
    const bobs = await postSession(t, bob.token, body);
    assert.notEqual(bobs.id, session.id);
    const deleted = await del(alice.token, session.id);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(deleted.json(), { ...session, deleted: true });
    assert.deepEqual((await readSleep(t, alice.token, range)).sleep, []);
    assert.deepEqual((await readSleep(t, bob.token, range)).sleep, [bobs]);
    assert.equal((await del(alice.token, session.id)).statusCode, 404);
    // An id of a deleted session names nothing once another session is stored at that start.
    const again = await postSession(t, alice.token, body);
    assert.notEqual(again.id, session.id);
    assert.equal((await del(alice.token, session.id)).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `${SLEEP}/${again.id}/`, headers: bearer(alice.token) })).statusCode, 200);
  });

  it('refuses bad dates, ranges over 100 dates and unknown parameters with 400 naming them', async () => {
    const { token } = await userWithToken(t);
    assert.equal((await get(token, 'start_date=2024-01-01&end_date=2024-04-09')).statusCode, 200, '100 dates');
    const cases: Array<[string, RegExp]> = [
      ['start_date=2024-01-01&end_date=2024-04-10', /^the range from start_date to end_date holds 101 dates; at most 100$/],
      ['start_date=2024-08-01', /^the range from start_date to end_date \(default: today\) holds 112 dates; at most 100$/],
      ['start_date=2024-02-30&end_date=2024-03-01', /^querystring\/start_date 2024-02-30 is not a date of the calendar$/],
      ['start_date=2024-2-3', /^querystring\/start_date must match pattern/],
      ['end_date=20240203', /^querystring\/end_date must match pattern/],
      ['start_date=2024-03-02&end_date=2024-03-01', /^querystring\/end_date 2024-03-01 is before start_date 2024-03-02$/],
      ['start_date=2024-03-01&start_date=2024-03-02', /^querystring\/start_date must be string$/],
      ['start=2024-03-01', /^querystring\/start is not a known field$/],
      ['timezone=Mars/Base', /^querystring\/timezone must be an IANA time zone name/],
      ['timezone=%2B05:30', /^querystring\/timezone must be an IANA time zone name/],
    ];
    for (const [query, description] of cases) {
      const response = await get(token, query);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description, query);
    }
  });

  it('refuses bad sessions with 400 naming the field, and writes nothing', async () => {
    const { user, token, appId } = await createAndToken();
    const start = utc(2024, 4, 1, 22);
    const good = night(start, [['light', 60], ['deep', 60], ['rem', 60]]);
    const [a, b, c] = good.stages;
    const stages = (...list: unknown[]) => ({ ...good, stages: list });
    const cases: Array<[unknown, RegExp]> = [
      [{ start_time: start, end_time: good.end_time }, /^body\/stages is required/],
      [{ ...good, device: 'ring' }, /^body\/device is not a known field/],
      [[good], /^body must be object/],
      [{ ...good, start_time: String(start) }, /^body\/start_time must be integer/],
      [{ ...good, start_time: start + 0.5 }, /^body\/start_time must be integer/],
      [{ ...good, start_time: -1 }, /^body\/start_time must be >= 0/],
      [stages(a, { ...b, stage: 'nap' }, c), /^body\/stages\/1\/stage must be one of awake, light, deep, rem/],
      [stages(a, { ...b, heart_rate: 50 }, c), /^body\/stages\/1\/heart_rate is not a known field/],
      [stages(a, { stage: 'deep', start_time: b!.start_time }, c), /^body\/stages\/1\/end_time is required/],
      [stages(), /^body\/stages must NOT have fewer than 1 items/],
      [{ ...good, end_time: start }, /^body\/end_time \d+ must be after body\/start_time \d+/],
      [night(start, [['light', 1441]]), /^body\/end_time is 86460 seconds after body\/start_time; a session lasts at most 24 hours/],
      [night(t.clock() + 86_400 - 3600, [['light', 61]]), /^body\/end_time is more than a day ahead of the server's clock/],
      [stages({ ...a, start_time: start + 60 }, b, c), /^body\/stages\/0\/start_time \d+ must equal body\/start_time \d+: the stages cover the session exactly/],
      [stages(a, { ...b, start_time: b!.start_time + 30 }, c), /^body\/stages\/1\/start_time \d+ must equal body\/stages\/0\/end_time \d+: stages are contiguous/],
      [stages(a, c, b), /^body\/stages\/1\/start_time \d+ must equal body\/stages\/0\/end_time/],
      [stages(a, { ...b, end_time: b!.start_time }, { ...c, start_time: b!.start_time }), /^body\/stages\/1\/end_time \d+ must be after its start_time/],
      [stages(a, b), /^body\/stages\/1\/end_time \d+ must equal body\/end_time \d+: the stages cover the session exactly/],
      [{ ...good, stages: Array.from({ length: 2881 }, (_, i) => ({ stage: 'light', start_time: start + i * 30, end_time: start + i * 30 + 30 })) }, /^body\/stages must NOT have more than 2880 items/],
    ];
    for (const [payload, description] of cases) {
      const response = await post(token, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload).slice(0, 300));
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description);
    }
    const stored = await t.database.db.kysely.selectFrom('sleep_sessions').select('start_time').where('user_id', '=', user.id).execute();
    assert.deepEqual(stored, []);
    assert.deepEqual(await eventsOf(t.database.db.kysely, appId, 'sleep.updated'), []);
    const media = await t.app.inject({ method: 'POST', url: SLEEP, headers: { ...bearer(token), 'content-type': 'text/plain' }, payload: JSON.stringify(good) });
    assert.equal(media.statusCode, 415);
    // 2880 stages of 30 seconds: a full day, accepted.
    const day = { start_time: start, end_time: start + 86_400, stages: Array.from({ length: 2880 }, (_, i) => ({ stage: (['light', 'deep', 'rem', 'awake'] as const)[i % 4]!, start_time: start + i * 30, end_time: start + i * 30 + 30 })) };
    assert.equal((await postSession(t, token, day)).stages.length, 2880);
  });

  it('tells apps that read sleep of every change: the dates of the sessions and a range per date', async () => {
    const { token, appId } = await createAndToken('Europe/Berlin');
    const db = t.database.db.kysely;
    // 31 March 2024 00:30 CET; the first session ends on the 31st, its replacement 24 hours
    // later at 01:30 CEST on 1 April: both dates change.
    const start = utc(2024, 3, 30, 23, 30);
    const first = await postSession(t, token, night(start, [['light', 480]]));
    await postSession(t, token, night(start, [['light', 1440]]));
    await del(token, first.id);
    const events = await eventsOf(db, appId, 'sleep.updated');
    const userId = events[0]?.user_id;
    assert.deepEqual(events, [
      { user_id: userId, dates: ['2024-03-31'], ranges: [{ start_time: start, end_time: start + 480 * 60 }] },
      // The replaced session and its replacement: a range per date, each its sessions that end on it.
      { user_id: userId, dates: ['2024-03-31', '2024-04-01'], ranges: [{ start_time: start, end_time: start + 480 * 60 }, { start_time: start, end_time: start + 86_400 }] },
      { user_id: userId, dates: ['2024-04-01'], ranges: [{ start_time: start, end_time: start + 86_400 }] },
    ]);
    // A refused session (overlap) tells nothing.
    await postSession(t, token, night(start, [['light', 60]]));
    assert.equal((await post(token, night(start + 30 * 60, [['light', 60]]))).statusCode, 409);
    assert.equal((await eventsOf(db, appId, 'sleep.updated')).length, 4);
  });

  it('is deleted with the account', async () => {
    const { user, token } = await userWithToken(t);
    await postSession(t, token, night(utc(2024, 2, 1, 22), [['light', 60]]));
    await t.database.stores.users.deleteAccount(user.id, t.clock());
    const left = await t.database.db.kysely.selectFrom('sleep_sessions').select('start_time').where('user_id', '=', user.id).execute();
    assert.deepEqual(left, []);
  });

  async function createAndToken(timezone = 'UTC') {
    const user = await createUser(t, { timezone });
    const { token, appId } = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES);
    return { user, token, appId };
  }
});
