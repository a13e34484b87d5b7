import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DateTime } from 'luxon';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { uploadEveryKind } from '../support/person-uploads.js';
import { ALL_RESOURCE_SCOPES, bearer, issueAccessToken, userWithToken, type TestUser } from '../support/tokens.js';
import { readHeartRate } from './heartrate-support.js';
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
    const send = async (method: 'POST' | 'PUT', url: string, payload: object) => {
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
    // Zones count from 180 bpm: fat burn from 90, cardio from 126, peak from 153.
    await send('PUT', '/v1/users/me', { max_heart_rate: 180 });
  });
  after(() => t.close());

  async function summary(token: string, query = 'start_date=2024-10-26&end_date=2024-10-28') {
    const response = await t.app.inject({ method: 'GET', url: `${SUMMARY}/?${query}`, headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { timezone: string; days: Array<Record<string, unknown>> };
  }

  const noActiveMinutes = { sedentary_minutes: 0, lightly_active_minutes: 0, fairly_active_minutes: 0, very_active_minutes: 0 };
  const noZoneMinutes = { heart_rate_zones: { out_of_range: 0, fat_burn: 0, cardio: 0, peak: 0 }, active_zone_minutes: 0 };

  it('sums each local date of the person\'s zone, across midnight and a change of clocks, with every scope', async () => {
    const { token } = await issueAccessToken(t, user, READ_SCOPES);
    assert.deepEqual(await summary(token), {
      timezone: 'Europe/Berlin',
      days: [
        // The 100 steps at 23:59 were taken asleep: in no activity level.
        { date: '2024-10-26', steps: 100, distance: 75, calories: 0, ...noActiveMinutes, resting_heart_rate: null, ...noZoneMinutes, minutes_asleep: 0, weight: null },
        {
          date: '2024-10-27', steps: 100, distance: 75, calories: 3.7,
          // The 40 minutes of 90 bpm without steps are sedentary, the 60 steps at 23:59 light.
          sedentary_minutes: 40, lightly_active_minutes: 1, fairly_active_minutes: 0, very_active_minutes: 0,
          // 55 bpm (asleep) is out of range, 90 bpm is half of 180: fat burn.
          resting_heart_rate: 55, heart_rate_zones: { out_of_range: 40, fat_burn: 40, cardio: 0, peak: 0 }, active_zone_minutes: 40,
          minutes_asleep: 530, weight: 80.65,
        },
        // Distance and calories alone are no minute of activity.
        { date: '2024-10-28', steps: 0, distance: 1234, calories: 0.1, ...noActiveMinutes, resting_heart_rate: null, ...noZoneMinutes, minutes_asleep: 0, weight: null },
      ],
    });
  });

  it('shows each field only to a token holding the scope that reads it', async () => {
    const expected: Record<string, string[]> = {
      read_profile: [],
      read_activity: ['steps', 'distance', 'calories', 'sedentary_minutes', 'lightly_active_minutes', 'fairly_active_minutes', 'very_active_minutes'],
      read_heartrate: ['resting_heart_rate', 'heart_rate_zones', 'active_zone_minutes'],
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
    assert.deepEqual((await summary(token)).days[1], {
      date: '2024-10-27', resting_heart_rate: 55, heart_rate_zones: { out_of_range: 40, fat_burn: 40, cardio: 0, peak: 0 }, active_zone_minutes: 40, weight: 80.65,
    });
    const activity = await issueAccessToken(t, user, ['read_activity']);
    assert.deepEqual((await summary(activity.token)).days[1], {
      date: '2024-10-27', steps: 100, distance: 75, calories: 3.7, sedentary_minutes: 40, lightly_active_minutes: 1, fairly_active_minutes: 0, very_active_minutes: 0,
    });
  });

  it('counts zones from the year of birth without a maximum, and none without either; the activity levels all the same', async () => {
    const other = await userWithToken(t, { timezone: 'Europe/Berlin' });
    const readings = [];
    // 150 bpm for ten minutes of the 27th, with no steps.
    for (let m = 0; m < 10; m++) readings.push({ time: berlin(27, 12) + m * 60, bpm: 150 });
    const posted = await t.app.inject({ method: 'POST', url: '/v1/users/me/heartrate/', headers: bearer(other.token), payload: { samples: readings } });
    assert.equal(posted.statusCode, 200, posted.body);
    const put = async (change: object) => assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(other.token), payload: change })).statusCode, 200);
    const { token } = await issueAccessToken(t, other.user, ['read_heartrate', 'read_activity']);
    const the27th = async () => {
      const { days } = await summary(token, 'start_date=2024-10-27&end_date=2024-10-27');
      const { date, heart_rate_zones, active_zone_minutes, sedentary_minutes, fairly_active_minutes } = days[0]!;
      return { date, heart_rate_zones, active_zone_minutes, sedentary_minutes, fairly_active_minutes };
    };
    // No maximum: no zones, and 150 bpm lifts no minute (it is no zone).
    assert.deepEqual(await the27th(), { date: '2024-10-27', heart_rate_zones: null, active_zone_minutes: null, sedentary_minutes: 10, fairly_active_minutes: 0 });
    const heartOnly = await issueAccessToken(t, other.user, ['read_heartrate']);
    assert.deepEqual((await summary(heartOnly.token, 'start_date=2024-10-27&end_date=2024-10-27')).days, [{ date: '2024-10-27', resting_heart_rate: null, heart_rate_zones: null, active_zone_minutes: null }]);
    // Born in 2004: 20 in 2024, a maximum of 200; 150 bpm is 75 %: cardio, and fairly active.
    await put({ birth_year: 2004 });
    assert.deepEqual(await the27th(), { date: '2024-10-27', heart_rate_zones: { out_of_range: 0, fat_burn: 0, cardio: 10, peak: 0 }, active_zone_minutes: 20, sedentary_minutes: 0, fairly_active_minutes: 10 });
    // A maximum of 175 wins over the year of birth: 150 bpm is 85.7 %: peak.
    await put({ max_heart_rate: 175 });
    assert.deepEqual(await the27th(), { date: '2024-10-27', heart_rate_zones: { out_of_range: 0, fat_burn: 0, cardio: 0, peak: 10 }, active_zone_minutes: 20, sedentary_minutes: 0, fairly_active_minutes: 10 });
  });

  it('counts zone minutes that are those of the minute heart-rate series, and levels from the minutes uploaded, in Asia/Kolkata', async () => {
    const kolkata = await userWithToken(t, { timezone: 'Asia/Kolkata' });
    const uploaded = await uploadEveryKind(t, kolkata.token, 3, 11);
    const birthYear = 1979;
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(kolkata.token), payload: { birth_year: birthYear } })).statusCode, 200);
    const { token } = await issueAccessToken(t, kolkata.user, ['read_heartrate', 'read_activity']);
    const today = DateTime.fromSeconds(t.clock(), { zone: 'Asia/Kolkata' });
    const dates = [2, 1, 0].map((back) => today.minus({ days: back }).toISODate()!);
    const { days } = await summary(token, `start_date=${dates[0]}&end_date=${dates[2]}`);
    const stepsAt = new Map(uploaded.steps.map((s) => [s.start_time, s.value]));
    let zoneMinutesSeen = 0;
    const levelsSeen = [0, 0, 0, 0];
    for (const [index, date] of dates.entries()) {
      const from = DateTime.fromISO(date, { zone: 'Asia/Kolkata' }).toSeconds();
      const to = from + 86_400;
      const maximum = 220 - (Number(date.slice(0, 4)) - birthYear);
      // The zone of each minute as the test counts it: its avg's share of the maximum.
      const zoneOf = (bpm: number) => (bpm * 100 >= 85 * maximum ? 'peak' : bpm * 100 >= 70 * maximum ? 'cardio' : bpm * 100 >= 50 * maximum ? 'fat_burn' : 'out_of_range');
      const zones = { out_of_range: 0, fat_burn: 0, cardio: 0, peak: 0 };
      const series = await readHeartRate(t, token, { start_time: from, end_time: to, granularity: 'minute' });
      assert.equal(series.heartrate.length, 1440);
      const bpmAt = new Map<number, number>();
      for (const minute of series.heartrate) {
        if (minute.avg === null) continue;
        zones[zoneOf(minute.avg)]++;
        bpmAt.set(minute.start_time, minute.avg);
      }
      const day = days[index]!;
      assert.equal(day.date, date);
      assert.deepEqual(day.heart_rate_zones, zones, date);
      assert.equal(day.active_zone_minutes, zones.fat_burn + 2 * (zones.cardio + zones.peak));
      zoneMinutesSeen += zones.fat_burn + zones.cardio + zones.peak;
      // The levels of the minutes uploaded, outside the sleep sessions uploaded.
      const levels = { sedentary_minutes: 0, lightly_active_minutes: 0, fairly_active_minutes: 0, very_active_minutes: 0 };
      for (let time = from; time < to; time += 60) {
        if (uploaded.sleep.some((session) => session.start_time <= time && time < session.end_time)) continue;
        const steps = stepsAt.get(time);
        const bpm = bpmAt.get(time);
        if (steps === undefined && bpm === undefined) continue;
        const byHeart = bpm !== undefined && bpm * 100 >= 70 * maximum;
        const count = steps ?? 0;
        if (count >= 130) levels.very_active_minutes++;
        else if (count >= 100 || byHeart) levels.fairly_active_minutes++;
        else if (count >= 1) levels.lightly_active_minutes++;
        else levels.sedentary_minutes++;
      }
      const { sedentary_minutes, lightly_active_minutes, fairly_active_minutes, very_active_minutes } = day;
      assert.deepEqual({ sedentary_minutes, lightly_active_minutes, fairly_active_minutes, very_active_minutes }, levels, date);
      Object.values(levels).forEach((minutes, level) => (levelsSeen[level]! += minutes));
    }
    assert.ok(zoneMinutesSeen > 0, 'some minutes are above out of range');
    // The office worker walks (fairly active) but never runs (very active).
    assert.ok(levelsSeen.slice(0, 3).every((minutes) => minutes > 0), `minutes of each level: ${levelsSeen}`);
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
