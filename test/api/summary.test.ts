import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { ALL_RESOURCE_SCOPES, bearer, issueAccessToken, userWithToken, type TestUser } from '../support/tokens.js';
import { utc } from './steps-support.js';

const SUMMARY = '/v1/users/me/summary/daily';
const READ_SCOPES = ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'read_body'];

/** Berlin is UTC+2 until 2024-10-27 03:00 local (01:00 UTC), UTC+1 after: the 27th has 25 hours. */
const berlin = (day: number, hour: number, minute = 0) => utc(2024, 10, day, hour - (day < 27 || (day === 27 && hour < 2) ? 2 : 1), minute);

forEachDialect('daily summary', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  let writer: string;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 10, 29, 12));
    ({ user, token: writer } = await userWithToken(t, { timezone: 'Europe/Berlin' }));
    const send = async (method: 'POST', url: string, payload: object) => {
      const response = await t.app.inject({ method, url, headers: bearer(writer), payload });
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    };
    // Steps: 23:59 on the 26th counts for the 26th; 00:30 on the 27th (22:30 UTC on the 26th) for the 27th.
    await send('POST', '/v1/users/me/activities/steps/', {
      samples: [{ start_time: berlin(26, 23, 59), value: 100 }, { start_time: berlin(27, 0, 30), value: 40 }, { start_time: berlin(27, 23, 59), value: 60 }],
    });
    // Distance sent for one minute of the 28th; the 27th's is derived from its steps (75 cm a step).
    await send('POST', '/v1/users/me/activities/distance/', { samples: [{ start_time: berlin(28, 9), value: 1234 }] });
    await send('POST', '/v1/users/me/activities/calories/', {
      samples: [{ start_time: berlin(27, 8), value: 1.5 }, { start_time: berlin(27, 9), value: 2.2 }, { start_time: berlin(28, 9), value: 0.1 }],
    });
    // Heart rate: 40 minutes at 55 bpm in the night of the 27th (a resting half hour), 90 bpm later.
    const readings = [];
    for (let m = 0; m < 40; m++) readings.push({ time: berlin(27, 4) + m * 60 + 5, bpm: 55 });
    for (let m = 0; m < 40; m++) readings.push({ time: berlin(27, 15) + m * 60 + 5, bpm: 90 });
    await send('POST', '/v1/users/me/heartrate/', { samples: readings });
    // Sleep from 23:00 on the 26th to 07:00 on the 27th, across midnight and the change of clocks
    // (nine hours of sleep on the clock's eight): it counts for the 27th, the date it ends on.
    const start = berlin(26, 23);
    const end = berlin(27, 7);
    await send('POST', '/v1/users/me/sleep/', {
      start_time: start,
      end_time: end,
      stages: [
        { stage: 'awake', start_time: start, end_time: start + 600 },
        { stage: 'deep', start_time: start + 600, end_time: end - 1800 },
        { stage: 'rem', start_time: end - 1800, end_time: end },
      ],
    });
    // Two weighings on the 27th: the day's weight is the last.
    await send('POST', '/v1/users/me/body/weight/', { time: berlin(27, 7, 30), kg: 80.1 });
    await send('POST', '/v1/users/me/body/weight/', { time: berlin(27, 21), kg: 80.65, fat_percent: 21 });
  });
  after(() => t.close());

  async function summary(token: string, query = 'start_date=2024-10-26&end_date=2024-10-28') {
    const response = await t.app.inject({ method: 'GET', url: `${SUMMARY}/?${query}`, headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { timezone: string; days: Array<Record<string, unknown>> };
  }

  it('sums each local date of the person\'s zone, across midnight and a change of clocks, with every scope', async () => {
    const { token } = await issueAccessToken(t, user, READ_SCOPES);
    assert.deepEqual(await summary(token), {
      timezone: 'Europe/Berlin',
      days: [
        { date: '2024-10-26', steps: 100, distance: 75, calories: 0, resting_heart_rate: null, minutes_asleep: 0, weight: null },
        { date: '2024-10-27', steps: 100, distance: 75, calories: 3.7, resting_heart_rate: 55, minutes_asleep: 530, weight: 80.65 },
        { date: '2024-10-28', steps: 0, distance: 1234, calories: 0.1, resting_heart_rate: null, minutes_asleep: 0, weight: null },
      ],
    });
  });

  it('shows each field only to a token holding the scope that reads it', async () => {
    const expected: Record<string, string[]> = {
      read_profile: [],
      read_activity: ['steps', 'distance', 'calories'],
      read_heartrate: ['resting_heart_rate'],
      read_sleep: ['minutes_asleep'],
      read_body: ['weight'],
      write_activity: [],
    };
    for (const [scope, fields] of Object.entries(expected)) {
      const { token } = await issueAccessToken(t, user, [scope]);
      const { days } = await summary(token);
      assert.equal(days.length, 3);
      for (const day of days) assert.deepEqual(Object.keys(day).sort(), ['date', ...fields].sort(), scope);
    }
    const { token } = await issueAccessToken(t, user, ['read_heartrate', 'read_body']);
    assert.deepEqual((await summary(token)).days[1], { date: '2024-10-27', resting_heart_rate: 55, weight: 80.65 });
  });

  it('counts the days of another zone when asked, and today by default', async () => {
    const { token } = await issueAccessToken(t, user, ['read_activity']);
    const inUtc = await summary(token, 'start_date=2024-10-26&end_date=2024-10-27&timezone=UTC');
    assert.equal(inUtc.timezone, 'UTC');
    // In UTC the 23:59 and 00:30 Berlin minutes both fall on the 26th.
    assert.deepEqual(inUtc.days.map((day) => [day.date, day.steps]), [['2024-10-26', 140], ['2024-10-27', 60]]);
    const today = await summary(token, '');
    assert.deepEqual(today.days.map((day) => day.date), ['2024-10-29']);
  });

  it('refuses bad dates, ranges and zones with 400 naming them, and a missing token with 401', async () => {
    const { token } = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES);
    const cases: Array<[string, RegExp]> = [
      ['start_date=2024-02-30&end_date=2024-03-01', /start_date 2024-02-30 is not a date/],
      ['start_date=2024-1-1', /querystring\/start_date must match/],
      ['start_date=2024-10-28&end_date=2024-10-26', /end_date 2024-10-26 is before start_date 2024-10-28/],
      ['start_date=2023-01-01&end_date=2024-01-02', /holds 367 dates; at most 366/],
      ['timezone=Mars/Olympus', /timezone must be an IANA time zone name/],
      ['date=2024-10-26', /querystring\/date is not a known field/],
    ];
    for (const [query, message] of cases) {
      const response = await t.app.inject({ method: 'GET', url: `${SUMMARY}?${query}`, headers: bearer(token) });
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, message, query);
    }
    const leap = await summary(token, 'start_date=2024-01-01&end_date=2024-12-31');
    assert.equal(leap.days.length, 366);
    const anonymous = await t.app.inject({ method: 'GET', url: SUMMARY });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json().error, 'invalid_token');
  });
});
