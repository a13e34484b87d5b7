/**
 * Uploads and deletes of the sum metrics (api/sum-metrics.ts, store/series-writer.ts): calories'
 * decimals, every bad input answered 400 naming the field with nothing written, DELETE of a range
 * with its count, its limits and its events, and the events of uploads, coalesced per type.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { pageWith } from '../support/feed.js';
import { bearer, createUser, issueAccessToken, userWithToken } from '../support/tokens.js';
import { pathOf, readMetric, removeRange, upload, type Metric } from './sum-metrics-support.js';
import { utc } from './steps-support.js';
import { eventRows } from '../support/events.js';

const DAY = utc(2024, 4, 2);
const NOW = utc(2024, 6, 1);

forEachDialect('sum metric uploads and deletes', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_COALESCE: '60' });
    t.clock.set(NOW);
  });
  after(() => t.close());

  const rowsOf = (userId: string) => t.database.db.kysely.selectFrom('series_days').select(['metric', 'day_start']).where('user_id', '=', userId).execute();
  const eventsOf = (userId: string) => eventRows(t.database.db.kysely, { userId });

  it('keeps calories to the tenth: sums without floating-point residue', async () => {
    const { token } = await userWithToken(t);
    const values = [0.1, 0.2, 2.3, 99.9, 100, 0, 14.7];
    await upload(t, token, 'calories', values.map((value, i) => ({ start_time: DAY + i * 60, value })));
    const minutes = await readMetric(t, token, 'calories', { start_time: DAY, end_time: DAY + 420, granularity: 'minute', timezone: 'UTC' });
    assert.deepEqual(minutes.buckets.map((b) => b.value), values);
    const day = await readMetric(t, token, 'calories', { start_time: DAY, end_time: DAY + 86_400, timezone: 'UTC' });
    assert.equal(day.total, 217.2);
    assert.equal(day.buckets[0]!.value, 217.2);
  });

  it('refuses more than one decimal of calories, and fractions of metres, naming the sample', async () => {
    const { user, token } = await userWithToken(t);
    for (const [metric, value, message] of [
      ['calories', 0.15, /^body\/samples\/1\/value must have at most one decimal$/],
      ['calories', 2.25, /one decimal/],
      ['calories', 0.01, /one decimal/],
      ['calories', 100.1, /^body\/samples\/1\/value must be <= 100$/],
      ['distance', 2.5, /^body\/samples\/1\/value must be integer$/],
    ] as const) {
      const response = await t.app.inject({ method: 'POST', url: pathOf(metric), headers: bearer(token), payload: { samples: [{ start_time: DAY, value: 1 }, { start_time: DAY + 60, value }] } });
      assert.equal(response.statusCode, 400, `${metric} ${value}`);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, message);
    }
    assert.deepEqual(await rowsOf(user.id), []);
  });

  it('answers bad input to every new route with 400 naming the field, and writes nothing', async () => {
    const { user, token } = await userWithToken(t);
    const sample = (i: number) => ({ start_time: DAY + i * 60, value: 1 });
    const good = [sample(0), sample(1), sample(2)];
    const badBodies: Array<[unknown, RegExp]> = [
      [{}, /^body\/samples is required$/],
      [{ samples: {} }, /^body\/samples must be array$/],
      [{ samples: [], device: 'x' }, /^body\/device is not a known field$/],
      [[sample(0)], /^body must be object$/],
      [{ samples: [...good, { start_time: DAY + 30, value: 1 }] }, /^body\/samples\/3\/start_time must be a multiple of 60$/],
      [{ samples: [...good, { start_time: -60, value: 1 }] }, /^body\/samples\/3\/start_time must be >= 0$/],
      [{ samples: [...good, { start_time: String(DAY), value: 1 }] }, /^body\/samples\/3\/start_time must be integer$/],
      [{ samples: [...good, { start_time: DAY, value: -1 }] }, /^body\/samples\/3\/value must be >= 0$/],
      [{ samples: [...good, { start_time: DAY, value: '3' }] }, /^body\/samples\/3\/value must be/],
      [{ samples: [...good, { start_time: DAY }] }, /^body\/samples\/3\/value is required$/],
      [{ samples: [...good, { ...sample(3), steps: 2 }] }, /^body\/samples\/3\/steps is not a known field$/],
      [{ samples: [...good, null] }, /^body\/samples\/3 must be object$/],
      [{ samples: [...good, { start_time: NOW + 86_400 + 60, value: 1 }] }, /^body\/samples\/3\/start_time is more than a day ahead of the server's clock$/],
      [{ samples: [...good, sample(5), sample(1)] }, /^body\/samples\/4\/start_time repeats the minute of body\/samples\/1; send one sample per minute$/],
      [{ samples: Array.from({ length: 10_081 }, (_, i) => sample(i)) }, /^body\/samples must NOT have more than 10080 items$/],
    ];
    const badQueries: Array<[string, RegExp]> = [
      ['granularity=week', /^querystring\/granularity must be one of minute, hour, day$/],
      ['start_time=abc', /^querystring\/start_time must be integer$/],
      ['start_time=-5', /^querystring\/start_time must be >= 0$/],
      ['start_time=1&start_time=2', /^querystring\/start_time must be integer$/],
      ['start=5', /^querystring\/start is not a known field$/],
      ['timezone=Mars/Olympus', /^timezone must be an IANA time zone name/],
      [`start_time=${DAY}&end_time=${DAY - 60}`, /^end_time -?\d+ is before start_time/],
      [`start_time=${DAY}&end_time=${DAY + 86_401}&granularity=minute`, /longer than 1 day/],
      [`start_time=${DAY}&end_time=${DAY + 32 * 86_400}&granularity=hour`, /longer than 31 days/],
    ];
    const badDeletes: Array<[string, RegExp]> = [
      [`start_time=${DAY}`, /^querystring\/end_time is required$/],
      [`end_time=${DAY}`, /^querystring\/start_time is required$/],
      [`start_time=${DAY}&end_time=x`, /^querystring\/end_time must be integer$/],
      [`start_time=${DAY}&end_time=${DAY + 60}&granularity=day`, /^querystring\/granularity is not a known field$/],
      [`start_time=${DAY}&end_time=${DAY - 60}`, /^end_time \d+ is before start_time \d+$/],
      [`start_time=${DAY}&end_time=${DAY + 31 * 86_400 + 1}`, /longer than 31 days/],
    ];
    for (const metric of ['distance', 'calories'] as const) {
      await upload(t, token, metric, [sample(100)]);
      for (const [payload, message] of badBodies) {
        const response = await t.app.inject({ method: 'POST', url: `${pathOf(metric)}/`, headers: bearer(token), payload: payload as object });
        assert.equal(response.statusCode, 400, `${metric} ${JSON.stringify(payload).slice(0, 80)}`);
        assert.equal(response.json().error, 'invalid_request');
        assert.match(response.json().error_description, message);
      }
      for (const [query, message] of badQueries) {
        const response = await t.app.inject({ method: 'GET', url: `${pathOf(metric)}?${query}`, headers: bearer(token) });
        assert.equal(response.statusCode, 400, `${metric} ${query}`);
        assert.match(response.json().error_description, message);
      }
    }
    await upload(t, token, 'steps', [sample(100)]);
    for (const metric of ['steps', 'distance', 'calories'] as const) {
      for (const [query, message] of badDeletes) {
        const response = await t.app.inject({ method: 'DELETE', url: `${pathOf(metric)}/?${query}`, headers: bearer(token) });
        assert.equal(response.statusCode, 400, `${metric} ${query}`);
        assert.equal(response.json().error, 'invalid_request');
        assert.match(response.json().error_description, message);
      }
      const kept = await readMetric(t, token, metric, { start_time: DAY, end_time: DAY + 86_400, granularity: 'minute', timezone: 'UTC' });
      assert.deepEqual(kept.buckets.filter((b) => b.value !== 0).map((b) => b.start_time), [DAY + 6000], `${metric}: only the minute uploaded first`);
    }
    assert.deepEqual((await rowsOf(user.id)).map((row) => row.metric).sort(), ['calories', 'distance', 'steps']);
  });

  it('deletes the minutes of a range, counting those that held data, and tells the apps', async () => {
    for (const metric of ['steps', 'distance', 'calories'] as const) {
      const { user, token } = await userWithToken(t);
      // Every other minute of three days, from 22:00 the day before.
      const first = DAY - 2 * 3600;
      const samples = Array.from({ length: 3 * 720 }, (_, i) => ({ start_time: first + i * 120, value: 3 }));
      await upload(t, token, metric, samples);
      // [23:00, 01:01:30 two days later): 23:00, 23:02, … up to 01:00 — 1,501 of them.
      const from = DAY - 3600;
      const to = DAY + 2 * 86_400 + 3600 + 90;
      const removed = await removeRange(t, token, metric, from, to);
      assert.equal(removed.statusCode, 200, removed.body);
      const expected = samples.filter((s) => s.start_time >= from && s.start_time < to);
      assert.deepEqual(removed.json(), { deleted: expected.length });
      assert.equal(expected.length, 1501);
      const left = await readMetric(t, token, metric, { start_time: first, end_time: first + 4 * 86_400, timezone: 'UTC', granularity: 'hour' });
      assert.equal(left.total, (samples.length - expected.length) * 3);
      assert.deepEqual((await removeRange(t, token, metric, from, to, '/')).json(), { deleted: 0 }, 'nothing left to delete');

      const events = await pageWith(() => eventsOf(user.id), (rows) => rows.length >= (metric === 'steps' ? 4 : 2));
      const deletes = events.slice(metric === 'steps' ? 2 : 1);
      const expectedTypes = metric === 'steps' ? ['steps.updated', 'distance.updated'] : [`${metric}.updated`];
      assert.deepEqual(deletes.map((e) => e.type), expectedTypes, `${metric}: one event for the delete, none for the empty one`);
      const data = JSON.parse(deletes[0]!.data);
      assert.deepEqual(data.dates, ['2024-04-01', '2024-04-02', '2024-04-03', '2024-04-04']);
      // The removed minutes were a minute apart, 1,501 runs: the event tells one range per date.
      assert.deepEqual(data.ranges, [
        { start_time: from, end_time: DAY - 60 },
        { start_time: DAY, end_time: DAY + 86_400 - 60 },
        { start_time: DAY + 86_400, end_time: DAY + 2 * 86_400 - 60 },
        { start_time: DAY + 2 * 86_400, end_time: DAY + 2 * 86_400 + 3600 + 60 },
      ]);
    }
  });

  it('deletes a range of exactly 31 days, and refuses one second more', async () => {
    const { token } = await userWithToken(t);
    await upload(t, token, 'calories', [{ start_time: DAY, value: 1.5 }, { start_time: DAY + 31 * 86_400 - 60, value: 2 }, { start_time: DAY + 31 * 86_400, value: 4 }]);
    assert.equal((await removeRange(t, token, 'calories', DAY, DAY + 31 * 86_400 + 1)).statusCode, 400);
    assert.deepEqual((await removeRange(t, token, 'calories', DAY, DAY + 31 * 86_400)).json(), { deleted: 2 });
    const left = await readMetric(t, token, 'calories', { start_time: DAY, end_time: DAY + 40 * 86_400, timezone: 'UTC' });
    assert.equal(left.total, 4);
  });

  it('records an event per upload in its transaction, and coalesces their webhook messages per type', async () => {
    const user = await createUser(t);
    const { token, appId } = await issueAccessToken(t, user, ['read_activity', 'write_activity']);
    await addEndpoint(t.app.ctx.stores.webhooks, t.config, appId, { url: 'http://127.0.0.1:9/hook', events: ['distance.updated', 'calories.updated'] }, t.clock());
    await upload(t, token, 'calories', [{ start_time: DAY, value: 1 }]);
    await upload(t, token, 'calories', [{ start_time: DAY + 60, value: 1 }, { start_time: DAY + 86_400, value: 2 }]);
    await upload(t, token, 'distance', [{ start_time: DAY + 600, value: 7 }]);
    const events = await pageWith(() => eventsOf(user.id), (rows) => rows.length >= 3);
    assert.deepEqual(events.map((e) => [e.type, JSON.parse(e.data)]), [
      ['calories.updated', { user_id: user.id, ranges: [{ start_time: DAY, end_time: DAY + 60 }], dates: ['2024-04-02'] }],
      ['calories.updated', { user_id: user.id, ranges: [{ start_time: DAY + 60, end_time: DAY + 120 }, { start_time: DAY + 86_400, end_time: DAY + 86_460 }], dates: ['2024-04-02', '2024-04-03'] }],
      ['distance.updated', { user_id: user.id, ranges: [{ start_time: DAY + 600, end_time: DAY + 660 }], dates: ['2024-04-02'] }],
    ]);
    const messages = await t.database.db.kysely.selectFrom('webhook_deliveries').select(['type', 'payload']).where('user_id', '=', user.id).orderBy('type').execute();
    assert.deepEqual(messages.map((m) => [m.type, JSON.parse(m.payload).data]), [
      ['calories.updated', { user_id: user.id, ranges: [{ start_time: DAY, end_time: DAY + 120 }, { start_time: DAY + 86_400, end_time: DAY + 86_460 }], dates: ['2024-04-02', '2024-04-03'] }],
      ['distance.updated', { user_id: user.id, ranges: [{ start_time: DAY + 600, end_time: DAY + 660 }], dates: ['2024-04-02'] }],
    ]);
  });

  it('writes only to the token\u2019s own user', async () => {
    const alice = await userWithToken(t);
    const bob = await userWithToken(t);
    for (const metric of ['distance', 'calories'] as Metric[]) await upload(t, bob.token, metric, [{ start_time: DAY, value: 9 }]);
    await upload(t, alice.token, 'steps', [{ start_time: DAY, value: 9 }]);
    assert.deepEqual((await removeRange(t, alice.token, 'calories', DAY, DAY + 86_400)).json(), { deleted: 0 });
    assert.deepEqual((await rowsOf(bob.user.id)).map((row) => row.metric).sort(), ['calories', 'distance']);
  });
});
