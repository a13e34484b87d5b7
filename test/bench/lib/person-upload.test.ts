import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { byUtcDay, uploadPerson, WRITE_SCOPES } from '../../../bench/lib/person-upload.js';
import { NIGHT_SHIFT_WORKER, synthesizePerson, type PersonData } from '../../../src/domain/synthetic-person.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { bearer, issueAccessToken, userWithToken } from '../../support/tokens.js';

const DAY = 86_400;

describe('byUtcDay', () => {
  it('groups by UTC day, days in order, items in their order within a day', () => {
    const items = [DAY * 3 + 5, DAY * 1 + 10, DAY * 3 + 1, DAY - 1, DAY * 1 + 70];
    assert.deepEqual(byUtcDay(items, (t) => t), [[DAY - 1], [DAY + 10, DAY + 70], [DAY * 3 + 5, DAY * 3 + 1]]);
    assert.deepEqual(byUtcDay([], (t: number) => t), []);
  });
});

forEachDialect('the bench uploads a made-up person through the API', (dialect) => {
  let t: TestApp;
  let origin: string;
  let data: PersonData;
  let reader: string;
  const now = Date.UTC(2026, 10, 20) / 1000 - 1;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(now + 3600);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const { user, token } = await userWithToken(t, {}, WRITE_SCOPES.split(' '));
    reader = (await issueAccessToken(t, user, ['read_activity', 'read_heartrate', 'read_sleep', 'read_body'])).token;
    // Asia/Kolkata: local days cut UTC days at 18:30, so each request holds parts of two local days.
    data = synthesizePerson(NIGHT_SHIFT_WORKER, now, 3, 11);
    const uploaded = await uploadPerson(origin, token, data);
    const utcDays = (times: number[]) => new Set(times.map((time) => Math.floor(time / DAY))).size;
    assert.equal(
      uploaded.requests,
      utcDays(data.steps.map((s) => s.start_time)) + utcDays(data.calories.map((s) => s.start_time)) + utcDays(data.heartrate.map((r) => r.time)) + data.sleep.length + data.weight.length,
    );
    assert.equal(uploaded.records, data.steps.length + data.calories.length + data.heartrate.length + data.sleep.length + data.weight.length);
  });

  after(() => t.close());

  const get = async <T>(url: string): Promise<T> => {
    const response = await t.app.inject({ method: 'GET', url, headers: bearer(reader) });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as T;
  };
  const first = () => Math.min(data.heartrate[0]!.time, data.calories[0]!.start_time, data.sleep[0]!.start_time);
  const range = () => `start_time=${Math.floor(first() / DAY) * DAY}&end_time=${Math.floor(now / DAY) * DAY + DAY}&granularity=day&timezone=UTC`;

  it('stores every minute of steps and calories', async () => {
    const steps = await get<{ total: number }>(`/v1/users/me/activities/steps?${range()}`);
    assert.equal(steps.total, data.steps.reduce((sum, s) => sum + s.value, 0));
    const calories = await get<{ total: number }>(`/v1/users/me/activities/calories?${range()}`);
    assert.ok(Math.abs(calories.total - data.calories.reduce((sum, s) => sum + s.value, 0)) < 0.01);
  });

  it('stores a heart-rate minute for each reading (one a minute)', async () => {
    const series = await get<{ heartrate: Array<{ minutes: number }> }>(`/v1/users/me/heartrate?${range()}`);
    const minutes = new Set(data.heartrate.map((r) => Math.floor(r.time / 60))).size;
    assert.equal(series.heartrate.reduce((sum, bucket) => sum + bucket.minutes, 0), minutes);
  });

  it('stores every night and every weighing', async () => {
    const dates = `start_date=2026-11-10&end_date=2026-11-21&timezone=UTC`;
    const sleep = await get<{ sleep: Array<{ start_time: number; stages: unknown[] }> }>(`/v1/users/me/sleep?${dates}`);
    assert.deepEqual(sleep.sleep.map((s) => [s.start_time, s.stages.length]), data.sleep.map((s) => [s.start_time, s.stages.length]));
    const weight = await get<{ weight: Array<{ time: number; kg: number }> }>(`/v1/users/me/body/weight?${dates}`);
    assert.deepEqual(weight.weight.map((w) => [w.time, w.kg]), data.weight.map((w) => [w.time, w.kg]));
  });

  it('stops at the first refused request and says which', async () => {
    const { token } = await userWithToken(t, {}, ['write_activity']);
    await assert.rejects(uploadPerson(origin, token, data), /POST \/v1\/users\/me\/heartrate: 403/);
  });
});
