import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, userWithToken } from '../support/tokens.js';
import { storedStepDays, storedStepMinutes } from '../support/series-days.js';
import { postSamples, readSeries, STEPS, utc } from './steps-support.js';

const DAY_START = utc(2024, 4, 2);

function dayOfMinutes(valueAt: (minute: number) => number) {
  return Array.from({ length: 1440 }, (_, minute) => ({ start_time: DAY_START + minute * 60, value: valueAt(minute) }));
}

forEachDialect('steps upload', (dialect) => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 6, 1));
  });
  after(() => t.close());

  const post = (token: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `${STEPS}/`, headers: { ...bearer(token), ...headers }, payload: payload as object });

  const storedMinutes = (userId: string) => storedStepMinutes(t.database.db.kysely, userId);

  /** Every stored day's total and hourly sums equal the sums of its minutes. */
  async function assertRollupsMatchMinutes(userId: string) {
    for (const day of await storedStepDays(t.database.db.kysely, userId)) {
      assert.equal(day.total, day.minutesTotal, `the total of day ${day.day_start}`);
      assert.deepEqual(day.hours, day.minutesHours, `the hours of day ${day.day_start}`);
    }
  }

  it('stores a day of minute samples and reads it back at every granularity', async () => {
    const { user, token } = await userWithToken(t);
    const samples = dayOfMinutes((minute) => (minute % 7) * 10);
    assert.deepEqual(await postSamples(t, token, samples), { accepted: 1440 });
    const total = samples.reduce((sum, s) => sum + s.value, 0);
    const range = { start_time: DAY_START, end_time: DAY_START + 86_400 };
    assert.equal((await readSeries(t, token, range)).total, total);
    assert.equal((await readSeries(t, token, { ...range, granularity: 'hour' })).total, total);
    const minutes = await readSeries(t, token, { ...range, granularity: 'minute' });
    assert.deepEqual(minutes.steps.map((b) => b.value), samples.map((s) => s.value));
    await assertRollupsMatchMinutes(user.id);
  });

  it('replaces re-sent minutes instead of adding them (idempotent re-sync)', async () => {
    const { user, token } = await userWithToken(t);
    const first = dayOfMinutes((minute) => minute % 100);
    await postSamples(t, token, first);
    await postSamples(t, token, first);
    const range = { start_time: DAY_START, end_time: DAY_START + 86_400 };
    const once = first.reduce((sum, s) => sum + s.value, 0);
    assert.equal((await readSeries(t, token, range)).total, once);

    // A device corrects part of the day, including minutes set back to 0.
    const corrected = first.slice(600, 700).map((s, i) => ({ start_time: s.start_time, value: i % 2 === 0 ? 0 : 999 }));
    assert.deepEqual(await postSamples(t, token, corrected), { accepted: 100 });
    const expected = once - first.slice(600, 700).reduce((sum, s) => sum + s.value, 0) + 50 * 999;
    assert.equal((await readSeries(t, token, range)).total, expected);
    assert.equal((await readSeries(t, token, { ...range, granularity: 'hour' })).total, expected);
    assert.equal((await storedMinutes(user.id)).length, 1440);
    await assertRollupsMatchMinutes(user.id);
  });

  it('writes nothing when one sample is invalid, naming the first bad one by index', async () => {
    const { user, token } = await userWithToken(t);
    const good = dayOfMinutes(() => 5).slice(0, 20);
    const cases: Array<[unknown, RegExp]> = [
      [{ start_time: DAY_START + 30, value: 1 }, /^samples\[7\] start_time must be a multiple of 60/],
      [{ start_time: -60, value: 1 }, /^samples\[7\] start_time must be a non-negative integer/],
      [{ start_time: String(DAY_START), value: 1 }, /^samples\[7\] start_time must be a non-negative integer/],
      [{ start_time: DAY_START + 86_400 * 400, value: 1 }, /^samples\[7\] start_time is more than a day ahead of the server's clock/],
      [{ start_time: DAY_START + 600 * 60, value: 1001 }, /^samples\[7\] value must be an integer from 0 to 1000/],
      [{ start_time: DAY_START + 600 * 60, value: -1 }, /^samples\[7\] value must be an integer/],
      [{ start_time: DAY_START + 600 * 60, value: 2.5 }, /^samples\[7\] value must be an integer/],
      [{ start_time: DAY_START + 600 * 60, value: '3' }, /^samples\[7\] value must be an integer/],
      [{ start_time: DAY_START + 600 * 60 }, /^samples\[7\] value must be an integer/],
      [{ start_time: DAY_START + 600 * 60, value: 1, steps: 2 }, /^samples\[7\] has an unknown field "steps"/],
      [{ start_time: DAY_START, value: 1 }, /^samples\[7\] repeats the minute/],
      [[DAY_START, 1], /^samples\[7\] must be an object/],
      [null, /^samples\[7\] must be an object/],
    ];
    for (const [bad, description] of cases) {
      const samples = [...good.slice(0, 7), bad, ...good.slice(7), { start_time: 1.5, value: 1 }];
      const response = await post(token, { samples });
      assert.equal(response.statusCode, 400, JSON.stringify(bad));
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description);
      assert.match(response.json().error_description, /nothing was written/);
    }
    assert.deepEqual(await storedMinutes(user.id), []);
    assert.deepEqual(await storedStepDays(t.database.db.kysely, user.id), []);
  });

  it('refuses bodies that are not {"samples": [...]}', async () => {
    const { token } = await userWithToken(t);
    const cases: Array<[unknown, RegExp]> = [
      [{}, /^samples must be an array/],
      [{ samples: {} }, /^samples must be an array/],
      [{ samples: [], device: 'x' }, /^unknown field "device"/],
      [[{ start_time: DAY_START, value: 1 }], /^the body must be a JSON object/],
    ];
    for (const [payload, description] of cases) {
      const response = await post(token, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.match(response.json().error_description, description);
    }
    const noBody = await t.app.inject({ method: 'POST', url: STEPS, headers: bearer(token) });
    assert.equal(noBody.statusCode, 400);
    assert.equal(noBody.json().error, 'invalid_request');
  });

  it('accepts 10,080 samples and refuses 10,081 without writing any', async () => {
    const { user, token } = await userWithToken(t);
    const start = utc(2024, 5, 1);
    const week = Array.from({ length: 10_081 }, (_, i) => ({ start_time: start + i * 60, value: 1 }));
    const tooMany = await post(token, { samples: week });
    assert.equal(tooMany.statusCode, 400);
    assert.equal(tooMany.json().error, 'invalid_request');
    assert.match(tooMany.json().error_description, /^samples has 10081 entries; at most 10080/);
    assert.deepEqual(await storedMinutes(user.id), []);

    assert.deepEqual(await postSamples(t, token, week.slice(0, 10_080)), { accepted: 10_080 });
    assert.equal((await readSeries(t, token, { start_time: start, end_time: start + 7 * 86_400 })).total, 10_080);
    await assertRollupsMatchMinutes(user.id);
  });

  it('answers other media types with 415 and writes nothing', async () => {
    const { user, token } = await userWithToken(t);
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'text/csv']) {
      const response = await t.app.inject({
        method: 'POST', url: STEPS, headers: { ...bearer(token), 'content-type': contentType }, payload: `start_time=${DAY_START}&value=1`,
      });
      assert.equal(response.statusCode, 415, contentType);
      assert.equal(response.json().error, 'unsupported_media_type');
    }
    const charset = await post(token, JSON.stringify({ samples: [{ start_time: DAY_START, value: 1 }] }), {
      'content-type': 'application/json; charset=utf-8',
    });
    assert.equal(charset.statusCode, 200);
    assert.deepEqual((await storedMinutes(user.id)).map((m) => Number(m.value)), [1]);
  });

  it('writes only to the token\u2019s own user', async () => {
    const alice = await userWithToken(t);
    const bob = await userWithToken(t);
    await postSamples(t, bob.token, [{ start_time: DAY_START, value: 9 }]);
    assert.deepEqual(await storedMinutes(alice.user.id), []);
    assert.equal((await storedMinutes(bob.user.id)).length, 1);
  });
});
