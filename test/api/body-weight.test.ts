import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, issueAccessToken, userWithToken } from '../support/tokens.js';
import { utc } from './steps-support.js';
import { eventsOf, WEIGHT } from './sleep-support.js';

interface Weight {
  id: string;
  time: number;
  kg: number;
  fat_percent: number | null;
}

forEachDialect('body weight', (dialect) => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 11, 20, 12));
  });
  after(() => t.close());

  const post = (token: string, payload: unknown) => t.app.inject({ method: 'POST', url: `${WEIGHT}/`, headers: bearer(token), payload: payload as object });
  const get = (token: string, query = '') => t.app.inject({ method: 'GET', url: `${WEIGHT}/?${query}`, headers: bearer(token) });
  const del = (token: string, id: string) => t.app.inject({ method: 'DELETE', url: `${WEIGHT}/${id}`, headers: bearer(token) });

  async function save(token: string, payload: unknown): Promise<Weight> {
    const response = await post(token, payload);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as Weight;
  }

  async function read(token: string, query = ''): Promise<{ timezone: string; weight: Weight[] }> {
    const response = await get(token, query);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { timezone: string; weight: Weight[] };
  }

  it('stores measurements with at most two decimals exactly, and reads them back oldest first', async () => {
    const { token } = await userWithToken(t);
    const time = utc(2024, 11, 18, 7, 30);
    const stored = [];
    for (const [i, kg] of [70.1, 70.15, 20, 400, 399.99, 20.01, 33.33].entries()) {
      stored.push(await save(token, { time: time + i * 60, kg }));
    }
    assert.deepEqual(stored.map((w) => w.kg), [70.1, 70.15, 20, 400, 399.99, 20.01, 33.33]);
    assert.ok(stored.every((w) => w.fat_percent === null && /^wgt_[A-Za-z0-9_-]{14}$/.test(w.id)));
    const withFat = await save(token, { time: time - 86_400, kg: 81.4, fat_percent: 22.35 });
    assert.deepEqual(withFat, { id: withFat.id, time: time - 86_400, kg: 81.4, fat_percent: 22.35 });
    const nullFat = await save(token, { time: time - 2 * 86_400, kg: 81.4, fat_percent: null });
    assert.equal(nullFat.fat_percent, null);
    const found = await read(token, 'start_date=2024-11-16&end_date=2024-11-18');
    assert.deepEqual(found, { timezone: 'UTC', weight: [nullFat, withFat, ...stored] });
    const noSlash = await t.app.inject({ method: 'GET', url: `${WEIGHT}?start_date=2024-11-17&end_date=2024-11-17`, headers: bearer(token) });
    assert.deepEqual(noSlash.json().weight, [withFat]);
  });

  it('refuses a third decimal, even one a float rounds near a multiple of 0.01', async () => {
    const { user, token } = await userWithToken(t);
    for (const [payload, description] of [
      [{ time: utc(2024, 11, 1), kg: 70.155 }, /^body\/kg must have at most two decimals, got 70.155; nothing was written$/],
      [{ time: utc(2024, 11, 1), kg: 70.001 }, /^body\/kg must have at most two decimals/],
      [{ time: utc(2024, 11, 1), kg: 70.1, fat_percent: 20.125 }, /^body\/fat_percent must have at most two decimals, got 20.125/],
    ] as const) {
      const response = await post(token, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.match(response.json().error_description, description);
    }
    assert.deepEqual(await t.database.db.kysely.selectFrom('body_weights').select('time').where('user_id', '=', user.id).execute(), []);
  });

  it('replaces the measurement at the same time, keeping its id', async () => {
    const { token } = await userWithToken(t);
    const time = utc(2024, 10, 3, 6);
    const first = await save(token, { time, kg: 75, fat_percent: 20 });
    const second = await save(token, { time, kg: 74.6 });
    assert.deepEqual(second, { id: first.id, time, kg: 74.6, fat_percent: null });
    assert.deepEqual((await read(token, 'start_date=2024-10-01&end_date=2024-10-31')).weight, [second]);
  });

  it('reads local dates: the profile\u2019s zone or the one asked for, the last 30 by default', async () => {
    const { token } = await userWithToken(t, { timezone: 'Asia/Kolkata' });
    // 19 November 2024 20:00 UTC is 01:30 on the 20th in Kolkata.
    const late = await save(token, { time: utc(2024, 11, 19, 20), kg: 60 });
    const old = await save(token, { time: utc(2024, 10, 22, 12), kg: 61 });
    const older = await save(token, { time: utc(2024, 10, 21, 12), kg: 62 });
    assert.deepEqual(await read(token), { timezone: 'Asia/Kolkata', weight: [old, late] });
    assert.deepEqual((await read(token, 'start_date=2024-11-20&end_date=2024-11-20')).weight, [late]);
    assert.deepEqual((await read(token, 'start_date=2024-11-19&end_date=2024-11-19&timezone=UTC')).weight, [late]);
    assert.deepEqual((await read(token, 'end_date=2024-10-21')).weight, [older]);
  });

  it('answers ranges of up to 1095 dates, and refuses longer ones and bad dates', async () => {
    const { token } = await userWithToken(t);
    assert.equal((await get(token, 'start_date=2022-01-01&end_date=2024-12-30')).statusCode, 200, '1095 dates');
    for (const [query, description] of [
      ['start_date=2022-01-01&end_date=2024-12-31', /^the range from start_date to end_date holds 1096 dates; at most 1095$/],
      ['start_date=2023-02-29', /^querystring\/start_date 2023-02-29 is not a date of the calendar$/],
      ['end_date=tomorrow', /^querystring\/end_date must match pattern/],
      ['start_date=2024-11-21', /^querystring\/end_date \(default: today\) 2024-11-20 is before start_date 2024-11-21$/],
      ['from=2024-11-01', /^querystring\/from is not a known field$/],
    ] as const) {
      const response = await get(token, query);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description, query);
    }
  });

  it('refuses bad measurements with 400 naming the field, and writes nothing', async () => {
    const { user, token, appId } = await createAndToken();
    const time = utc(2024, 11, 1, 7);
    const cases: Array<[unknown, RegExp]> = [
      [{ kg: 70 }, /^body\/time is required/],
      [{ time }, /^body\/kg is required/],
      [{ time, kg: 19.99 }, /^body\/kg must be >= 20/],
      [{ time, kg: 400.01 }, /^body\/kg must be <= 400/],
      [{ time, kg: '70' }, /^body\/kg must be number/],
      [{ time, kg: 70, fat_percent: 0.99 }, /^body\/fat_percent must be >= 1/],
      [{ time, kg: 70, fat_percent: 75.01 }, /^body\/fat_percent must be <= 75/],
      [{ time, kg: 70, fat_percent: '20' }, /^body\/fat_percent must be number,null/],
      [{ time: time + 0.5, kg: 70 }, /^body\/time must be integer/],
      [{ time: -1, kg: 70 }, /^body\/time must be >= 0/],
      [{ time, kg: 70, bmi: 22 }, /^body\/bmi is not a known field/],
      [{ time: t.clock() + 86_401, kg: 70 }, /^body\/time is more than a day ahead of the server's clock/],
      [[{ time, kg: 70 }], /^body must be object/],
    ];
    for (const [payload, description] of cases) {
      const response = await post(token, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, description);
    }
    assert.deepEqual(await t.database.db.kysely.selectFrom('body_weights').select('time').where('user_id', '=', user.id).execute(), []);
    assert.deepEqual(await eventsOf(t.database.db.kysely, appId, 'body.updated'), []);
    assert.equal((await post(token, { time: t.clock() + 86_400, kg: 70 })).statusCode, 200, 'a day ahead is the limit');
  });

  it('deletes a measurement of the token\u2019s user by id, and answers 404 for anyone else\u2019s or an unknown one', async () => {
    const alice = await userWithToken(t);
    const bob = await userWithToken(t);
    const time = utc(2024, 9, 9, 9);
    const weight = await save(alice.token, { time, kg: 55.5 });
    for (const id of [weight.id, 'wgt_AAAAAAAAAAAAAA', weight.id.replace('wgt_', 'slp_'), 'x'.repeat(90)]) {
      const response = await del(bob.token, id);
      assert.equal(response.statusCode, 404, id);
      assert.deepEqual(response.json(), { error: 'not_found', error_description: 'no such weight measurement of this user' });
    }
    const deleted = await del(alice.token, weight.id);
    assert.deepEqual(deleted.json(), { ...weight, deleted: true });
    assert.deepEqual((await read(alice.token, 'start_date=2024-09-09&end_date=2024-09-09')).weight, []);
    assert.equal((await del(alice.token, weight.id)).statusCode, 404);
  });

  it('shows an app without read_body no stored measurement but the one it sent: not in a DELETE answer, not in a replacing POST', async () => {
    const { user, token: scale } = await userWithToken(t);
    const { token: writer } = await issueAccessToken(t, user, ['write_body']);
    assert.equal((await get(writer)).statusCode, 403);
    const time = utc(2024, 11, 12, 7);
    // The writer's measurement, sent again by the person's scale with other values: it keeps its id.
    const sent = await save(writer, { time, kg: 80 });
    const resent = await save(scale, { time, kg: 81.37, fat_percent: 24.55 });
    assert.equal(resent.id, sent.id);
    // DELETE of that id answered the scale's values (found November 2026): now the id alone.
    const deleted = await del(writer, sent.id);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(deleted.json(), { id: sent.id, deleted: true });
    for (const secret of ['81.37', '24.55']) assert.ok(!deleted.body.includes(secret), deleted.body);
    assert.deepEqual((await read(scale, 'start_date=2024-11-12&end_date=2024-11-12')).weight, []);
    // A POST replacing the scale's measurement answers what it sent, every value of it (none kept of the one replaced).
    const scales = await save(scale, { time: time + 3600, kg: 90.12, fat_percent: 30.5 });
    const replaced = await post(writer, { time: time + 3600, kg: 70 });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.deepEqual(replaced.json(), { id: scales.id, time: time + 3600, kg: 70, fat_percent: null });
    for (const secret of ['90.12', '30.5']) assert.ok(!replaced.body.includes(secret), replaced.body);
    assert.deepEqual((await read(scale, 'start_date=2024-11-12&end_date=2024-11-12')).weight, [replaced.json()]);
    // With read_body too, a DELETE answers the measurement as it was.
    const { token: both } = await issueAccessToken(t, user, ['read_body', 'write_body']);
    const again = await save(scale, { time: time + 7200, kg: 88.8, fat_percent: 21 });
    assert.deepEqual((await del(both, again.id)).json(), { ...again, deleted: true });
  });

  it('tells apps that read body data of every change, with its local date', async () => {
    const { token, appId } = await createAndToken('America/New_York');
    // 2 November 2024 02:00 UTC is 22:00 on 1 November in New York.
    const weight = await save(token, { time: utc(2024, 11, 2, 2), kg: 90 });
    await save(token, { time: utc(2024, 11, 2, 2), kg: 89.5 });
    await del(token, weight.id);
    const events = await eventsOf(t.database.db.kysely, appId, 'body.updated');
    assert.deepEqual(events.map((e) => e.dates), [['2024-11-01'], ['2024-11-01'], ['2024-11-01']]);
    assert.ok(events.every((e) => typeof e.user_id === 'string' && Object.keys(e).length === 2));
  });

  it('is deleted with the account', async () => {
    const { user, token } = await userWithToken(t);
    await save(token, { time: utc(2024, 2, 1), kg: 70 });
    await t.database.stores.users.deleteAccount(user.id, t.clock());
    assert.deepEqual(await t.database.db.kysely.selectFrom('body_weights').select('time').where('user_id', '=', user.id).execute(), []);
  });

  async function createAndToken(timezone = 'UTC') {
    const user = await createUser(t, { timezone });
    const { token, appId } = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES);
    return { user, token, appId };
  }
});
