/**
 * The Fitbit-compatible activity and heart-rate resources (src/api/fitbit/activities.ts): for a test
 * person of each life — an office worker in Europe/Berlin across the night the clocks go forward,
 * a night-shift worker in Asia/Kolkata, two in New York — every value equals what `/v1/…` answers
 * for the same person and local dates, in Fitbit's shapes.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DateTime } from 'luxon';
import type { TestPerson } from '../../../src/store/test-people.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { bearer, issueAccessToken, userWithToken } from '../../support/tokens.js';
import { postReadings, readHeartRate } from '../heartrate-support.js';
import { readMetric, upload, type Metric } from '../sum-metrics-support.js';
import { fitbitJson, testPeopleWithTokens } from './fitbit-support.js';

/** Noon UTC on 31 March 2026: four days of data from the 28th, the 29th Berlin's 23-hour day. */
const NOW = Date.UTC(2026, 2, 31, 12) / 1000;

forEachDialect('Fitbit-compatible activity resources', (dialect) => {
  let t: TestApp;
  let people: Array<{ person: TestPerson; token: string }>;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(NOW);
    people = await testPeopleWithTokens(t, NOW, 4);
  });
  after(() => t.close());

  const midnight = (date: string, zone: string) => DateTime.fromISO(date, { zone }).toSeconds();
  const nextMidnight = (date: string, zone: string) => DateTime.fromISO(date, { zone }).plus({ days: 1 }).startOf('day').toSeconds();

  async function v1Daily(token: string, metric: Metric, first: string, last: string, zone: string): Promise<number[]> {
    const series = await readMetric(t, token, metric, { start_time: midnight(first, zone), end_time: nextMidnight(last, zone), granularity: 'day', timezone: zone });
    return series.buckets.map((bucket) => bucket.value);
  }

  it('answers the daily series of steps, distance and calories as /v1 does, by period and by range', async () => {
    for (const { person, token } of people) {
      const zone = person.timezone;
      for (const metric of ['steps', 'distance', 'calories'] as const) {
        const expected = await v1Daily(token, metric, '2026-03-25', '2026-03-31', zone);
        assert.ok(expected.some((value) => value > 0), `${person.life} has ${metric}`);
        const byPeriod = await fitbitJson<Record<string, Array<{ dateTime: string; value: string }>>>(t, token, `/1/user/-/activities/${metric}/date/2026-03-31/7d.json`);
        const series = byPeriod[`activities-${metric}`]!;
        assert.deepEqual(series.map((day) => day.dateTime), ['2026-03-25', '2026-03-26', '2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31']);
        for (const day of series) assert.equal(typeof day.value, 'string', 'values are strings, as Fitbit sends them');
        // Distance in kilometres without Accept-Language.
        const values = series.map((day) => (metric === 'distance' ? Math.round(Number(day.value) * 1000) : Number(day.value)));
        assert.deepEqual(values, expected, `${person.life}'s ${metric}`);

        const byRange = await fitbitJson<Record<string, Array<{ dateTime: string; value: string }>>>(t, token, `/1/user/${person.id}/activities/${metric}/date/2026-03-28/2026-03-30.json`);
        assert.deepEqual(byRange[`activities-${metric}`], series.slice(3, 6));
      }
    }
  });

  it('answers distance in miles to en_US, as Fitbit does', async () => {
    const { token } = people[0]!;
    const metric = await fitbitJson<Record<string, Array<{ value: string }>>>(t, token, '/1/user/-/activities/distance/date/2026-03-31/7d.json');
    const miles = await fitbitJson<Record<string, Array<{ value: string }>>>(t, token, '/1/user/-/activities/distance/date/2026-03-31/7d.json', { 'accept-language': 'en_US' });
    metric['activities-distance']!.forEach((day, i) => {
      assert.ok(Math.abs(Number(day.value) / 1.609344 - Number(miles['activities-distance']![i]!.value)) < 1e-5);
    });
  });

  it('answers a day of minutes as /v1 does, 23 hours on the day Berlin\'s clocks go forward, and by 15 minutes within a window', async () => {
    for (const { person, token } of people) {
      const zone = person.timezone;
      const date = '2026-03-29';
      const from = midnight(date, zone);
      const to = nextMidnight(date, zone);
      for (const metric of ['steps', 'calories'] as const) {
        const minutes = (await readMetric(t, token, metric, { start_time: from, end_time: to, granularity: 'minute', timezone: zone })).buckets;
        const body = await fitbitJson<Record<string, { dataset: Array<{ time: string; value: number }>; datasetInterval: number; datasetType: string }> & Record<string, Array<{ value: string }>>>(t, token, `/1/user/-/activities/${metric}/date/${date}/1d/1min.json`);
        const intraday = body[`activities-${metric}-intraday`]!;
        assert.equal(intraday.dataset.length, (to - from) / 60, `${person.life}: one entry a minute of the local day`);
        if (zone === 'Europe/Berlin') assert.equal(intraday.dataset.length, 23 * 60);
        assert.deepEqual(intraday.dataset.map((entry) => entry.value), minutes.map((bucket) => bucket.value));
        assert.deepEqual(intraday.dataset.map((entry) => entry.time), minutes.map((bucket) => DateTime.fromSeconds(bucket.start_time, { zone }).toFormat('HH:mm:ss')));
        assert.equal(intraday.datasetInterval, 1);
        assert.equal(intraday.datasetType, 'minute');
        const total = minutes.reduce((sum, bucket) => sum + bucket.value * 10, 0) / 10;
        assert.equal(Number(body[`activities-${metric}`]![0]!.value), total);

        // 15 minutes between 06:00 and 09:59: sums of the same minutes, by the local quarter hour.
        const quarters = await fitbitJson<Record<string, { dataset: Array<{ time: string; value: number }>; datasetInterval: number }>>(t, token, `/1/user/-/activities/${metric}/date/${date}/1d/15min/time/06:00/09:59.json`);
        const expected = new Map<string, number>();
        for (const bucket of minutes) {
          const local = DateTime.fromSeconds(bucket.start_time, { zone });
          if (local.hour < 6 || local.hour > 9) continue;
          const key = `${local.toFormat('HH')}:${String(Math.floor(local.minute / 15) * 15).padStart(2, '0')}:00`;
          expected.set(key, Math.round(((expected.get(key) ?? 0) + bucket.value) * 10) / 10);
        }
        const quarterDataset = quarters[`activities-${metric}-intraday`]!;
        assert.equal(quarterDataset.datasetInterval, 15);
        assert.deepEqual(quarterDataset.dataset, [...expected].map(([time, value]) => ({ time, value })));
      }
    }
  });

  it('answers heart rate: minutes with data as /v1\'s minute averages, resting heart rate per day', async () => {
    for (const { person, token } of people) {
      const zone = person.timezone;
      const date = '2026-03-29';
      const from = midnight(date, zone);
      const to = nextMidnight(date, zone);
      const minutes = (await readHeartRate(t, token, { start_time: from, end_time: to, granularity: 'minute', timezone: zone })).heartrate;
      const body = await fitbitJson<{ 'activities-heart': Array<{ dateTime: string; value: { restingHeartRate?: number } }>; 'activities-heart-intraday': { dataset: Array<{ time: string; value: number }> } }>(
        t, token, `/1/user/-/activities/heart/date/${date}/1d/1min.json`,
      );
      const withData = minutes.filter((bucket) => bucket.minutes > 0);
      assert.ok(withData.length > 100, `${person.life} has heart rate`);
      assert.deepEqual(body['activities-heart-intraday'].dataset, withData.map((bucket) => ({ time: DateTime.fromSeconds(bucket.start_time, { zone }).toFormat('HH:mm:ss'), value: bucket.avg })));
      // The day's resting heart rate, as /v1's daily series gives it.
      const [day] = (await readHeartRate(t, token, { start_time: from, end_time: to, granularity: 'day', timezone: zone })).heartrate;
      assert.equal(typeof day!.resting, 'number', `${person.life} has a resting heart rate on ${date}`);
      assert.equal(body['activities-heart'][0]!.value.restingHeartRate, day!.resting);
      // 1sec answers the minutes Stride holds.
      const seconds = await fitbitJson<{ 'activities-heart-intraday': { dataset: unknown[] } }>(t, token, `/1/user/-/activities/heart/date/${date}/1d/1sec.json`);
      assert.deepEqual(seconds['activities-heart-intraday'].dataset, body['activities-heart-intraday'].dataset);

      const days = (await readHeartRate(t, token, { start_time: midnight('2026-03-25', zone), end_time: nextMidnight('2026-03-31', zone), granularity: 'day', timezone: zone })).heartrate;
      const week = await fitbitJson<{ 'activities-heart': Array<{ dateTime: string; value: { restingHeartRate?: number } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-31/1w.json');
      assert.deepEqual(week['activities-heart'].map((day) => day.value.restingHeartRate ?? null), days.map((bucket) => bucket.resting ?? null));
      assert.ok(days.some((bucket) => typeof bucket.resting === 'number'));
    }
  });

  it('answers a UTC day\'s resting heart rate as /v1\'s daily series does: the lowest half hour of the day', async () => {
    // In UTC a day bucket is a stored day, whose resting heart rate is read from its total.
    const { token } = await userWithToken(t, { timezone: 'UTC' });
    const day = Date.UTC(2026, 2, 29) / 1000;
    // 70 all day, 50 from 03:15 to 03:45: the lowest half hour is 50, the half hours around it higher.
    const readings = Array.from({ length: 1440 }, (_, m) => ({ time: day + m * 60, bpm: m >= 195 && m < 225 ? 50 : 70 }));
    await postReadings(t, token, readings);
    const [v1] = (await readHeartRate(t, token, { start_time: day, end_time: day + 86_400, granularity: 'day', timezone: 'UTC' })).heartrate;
    assert.equal(v1!.resting, 50);
    const body = await fitbitJson<{ 'activities-heart': Array<{ value: { restingHeartRate?: number } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-29/1d/1min.json');
    assert.equal(body['activities-heart'][0]!.value.restingHeartRate, 50);
    const series = await fitbitJson<{ 'activities-heart': Array<{ value: { restingHeartRate?: number } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-29/1d.json');
    assert.equal(series['activities-heart'][0]!.value.restingHeartRate, 50);
  });

  it('answers zones, active zone minutes, activity minutes and the daily summary as /v1\'s daily summary counts them', async () => {
    for (const { person, token } of people) {
      await t.database.stores.users.updateProfile(person.id, { birth_year: 1990 }, NOW);
      const summary = (await t.app.inject({ url: '/v1/users/me/summary/daily/?start_date=2026-03-25&end_date=2026-03-31', headers: { authorization: `Bearer ${token}` } })).json() as {
        days: Array<{ date: string; steps: number; distance: number; calories: number; resting_heart_rate: number | null; heart_rate_zones: Record<string, number>; active_zone_minutes: number; sedentary_minutes: number; lightly_active_minutes: number; fairly_active_minutes: number; very_active_minutes: number }>;
      };
      const heart = await fitbitJson<{ 'activities-heart': Array<{ value: { heartRateZones: Array<{ name: string; min: number; max: number; minutes: number }> } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-31/7d.json');
      heart['activities-heart'].forEach((day, i) => {
        assert.deepEqual(day.value.heartRateZones.map((zone) => zone.name), ['Out of Range', 'Fat Burn', 'Cardio', 'Peak']);
        assert.deepEqual(day.value.heartRateZones.map((zone) => zone.minutes), Object.values(summary.days[i]!.heart_rate_zones), `${person.life} ${summary.days[i]!.date}`);
      });
      // 220 − 36 = 184: fat burn from 92, cardio from 129, peak from 157.
      assert.deepEqual(heart['activities-heart'][0]!.value.heartRateZones.map((zone) => [zone.min, zone.max]).slice(1, 3), [[92, 128], [129, 156]]);
      const azm = await fitbitJson<{ 'activities-active-zone-minutes': Array<{ dateTime: string; value: { activeZoneMinutes: number; fatBurnActiveZoneMinutes: number; cardioActiveZoneMinutes: number; peakActiveZoneMinutes: number } }> }>(t, token, '/1/user/-/activities/active-zone-minutes/date/2026-03-31/7d.json');
      assert.deepEqual(azm['activities-active-zone-minutes'].map((day) => [day.dateTime, day.value.activeZoneMinutes]), summary.days.map((day) => [day.date, day.active_zone_minutes]));
      for (const day of azm['activities-active-zone-minutes']) assert.equal(day.value.fatBurnActiveZoneMinutes + day.value.cardioActiveZoneMinutes + day.value.peakActiveZoneMinutes, day.value.activeZoneMinutes);
      for (const [resource, field] of [['minutesSedentary', 'sedentary_minutes'], ['minutesLightlyActive', 'lightly_active_minutes'], ['minutesFairlyActive', 'fairly_active_minutes'], ['minutesVeryActive', 'very_active_minutes']] as const) {
        const series = await fitbitJson<Record<string, Array<{ value: string }>>>(t, token, `/1/user/-/activities/${resource}/date/2026-03-25/2026-03-31.json`);
        assert.deepEqual(series[`activities-${resource}`]!.map((day) => Number(day.value)), summary.days.map((day) => day[field]), `${person.life} ${resource}`);
      }
      const last = summary.days.at(-1)!;
      const daily = await fitbitJson<{ goals: { steps: number }; summary: Record<string, unknown> & { distances: Array<{ activity: string; distance: number }> } }>(t, token, '/1/user/-/activities/date/2026-03-31.json');
      assert.equal(daily.goals.steps, 10_000);
      assert.deepEqual(
        [daily.summary.steps, daily.summary.caloriesOut, Math.round(daily.summary.distances[0]!.distance * 1000), daily.summary.restingHeartRate ?? null, daily.summary.sedentaryMinutes, daily.summary.veryActiveMinutes],
        [last.steps, last.calories, last.distance, last.resting_heart_rate, last.sedentary_minutes, last.very_active_minutes],
      );
      assert.deepEqual((daily.summary.heartRateZones as Array<{ minutes: number }>).map((zone) => zone.minutes), Object.values(last.heart_rate_zones));
    }
  });

  /**
   * A person in Europe/Berlin with a maximum heart rate of 200 (fat burn from 100, cardio from 140,
   * peak from 170) and minutes made by hand over 28–31 March 2026, the 29th a 23-hour date.
   */
  async function personWithKnownMinutes() {
    const { user, token } = await userWithToken(t, { timezone: 'Europe/Berlin' });
    const put = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { max_heart_rate: 200 } });
    assert.equal(put.statusCode, 200, put.body);
    const at = (iso: string) => Date.parse(iso) / 1000;
    // [UTC minute, steps, bpm, kcal]; null: nothing uploaded of that kind.
    const minutes: Array<[string, number | null, number | null, number | null]> = [
      // 28 March, 10:00–10:05 local: fairly (cardio), very (peak), sedentary (out of range), lightly
      // (fat burn), lightly without calories, sedentary with calories.
      ['2026-03-28T09:00Z', 120, 150, 5.5],
      ['2026-03-28T09:01Z', 140, 180, 8.2],
      ['2026-03-28T09:02Z', 0, 90, 1.3],
      ['2026-03-28T09:03Z', 50, 120, 3],
      ['2026-03-28T09:04Z', 60, null, null],
      ['2026-03-28T09:05Z', 0, null, 1.1],
      // 29 March, 01:30 before the clocks go forward and 03:30 after, and its last minute (23:59).
      ['2026-03-29T00:30Z', 110, 130, 2],
      ['2026-03-29T01:30Z', 110, null, 2.5],
      ['2026-03-29T21:59Z', 10, null, 0.7],
      // 30 March: its first minute (00:00 local) lightly active, a sedentary minute with calories.
      ['2026-03-29T22:00Z', 10, null, 0.4],
      ['2026-03-30T08:00Z', 0, 95, 9.9],
    ];
    const samples = (column: 1 | 3) => minutes.flatMap((minute) => (minute[column] === null ? [] : [{ start_time: at(minute[0]), value: minute[column]! }]));
    await upload(t, token, 'steps', samples(1));
    await upload(t, token, 'calories', samples(3));
    await postReadings(t, token, minutes.flatMap(([time, , bpm]) => (bpm === null ? [] : [{ time: at(time), bpm }])));
    return { user, token };
  }

  it('answers activityCalories as the calories of the lightly, fairly and very active minutes of each date, "0" without any', async () => {
    const { token } = await personWithKnownMinutes();
    const expected = [
      { dateTime: '2026-03-28', value: String((55 + 82 + 30) / 10) },
      { dateTime: '2026-03-29', value: String((20 + 25 + 7) / 10) },
      { dateTime: '2026-03-30', value: '0.4' },
      { dateTime: '2026-03-31', value: '0' },
    ];
    const byRange = await fitbitJson<Record<string, unknown>>(t, token, '/1/user/-/activities/activityCalories/date/2026-03-28/2026-03-31.json');
    assert.deepEqual(byRange, { 'activities-activityCalories': expected });
    const byPeriod = await fitbitJson<Record<string, Array<{ dateTime: string; value: string }>>>(t, token, '/1/user/-/activities/activityCalories/date/2026-03-31/7d.json');
    assert.deepEqual(byPeriod['activities-activityCalories']!.slice(3), expected);
    assert.deepEqual(byPeriod['activities-activityCalories']!.slice(0, 3).map((day) => day.value), ['0', '0', '0']);
    // The levels they come from, as the level series answer them.
    const lightly = await fitbitJson<Record<string, Array<{ value: string }>>>(t, token, '/1/user/-/activities/minutesLightlyActive/date/2026-03-28/2026-03-31.json');
    assert.deepEqual(lightly['activities-minutesLightlyActive']!.map((day) => day.value), ['2', '1', '1', '0']);
  });

  it('answers each heart-rate zone\'s caloriesOut as the calories of its minutes, in the series, the intraday day and the daily summary', async () => {
    const { user, token } = await personWithKnownMinutes();
    type Zones = Array<{ name: string; min: number; max: number; minutes: number; caloriesOut: number }>;
    const zonesOf = (zones: Zones) => zones.map((zone) => [zone.name, zone.minutes, zone.caloriesOut]);
    const heart = await fitbitJson<{ 'activities-heart': Array<{ dateTime: string; value: { heartRateZones: Zones } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-28/2026-03-30.json');
    assert.deepEqual(heart['activities-heart'].map((day) => [day.dateTime, zonesOf(day.value.heartRateZones)]), [
      ['2026-03-28', [['Out of Range', 1, 1.3], ['Fat Burn', 1, 3], ['Cardio', 1, 5.5], ['Peak', 1, 8.2]]],
      ['2026-03-29', [['Out of Range', 0, 0], ['Fat Burn', 1, 2], ['Cardio', 0, 0], ['Peak', 0, 0]]],
      ['2026-03-30', [['Out of Range', 1, 9.9], ['Fat Burn', 0, 0], ['Cardio', 0, 0], ['Peak', 0, 0]]],
    ]);
    for (const zone of heart['activities-heart'][0]!.value.heartRateZones) assert.equal(typeof zone.caloriesOut, 'number', 'numbers, as Fitbit sends them');
    const intraday = await fitbitJson<{ 'activities-heart': Array<{ value: { heartRateZones: Zones } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-28/1d/1min.json');
    assert.deepEqual(intraday['activities-heart'][0]!.value.heartRateZones, heart['activities-heart'][0]!.value.heartRateZones);

    const daily = await fitbitJson<{ summary: { caloriesOut: number; activityCalories: number; heartRateZones: Zones } }>(t, token, '/1/user/-/activities/date/2026-03-28.json');
    assert.equal(daily.summary.caloriesOut, (55 + 82 + 13 + 30 + 11) / 10);
    assert.equal(daily.summary.activityCalories, (55 + 82 + 30) / 10);
    assert.deepEqual(daily.summary.heartRateZones, heart['activities-heart'][0]!.value.heartRateZones);
    // Without read_heartrate: activityCalories all the same, no zones.
    const activityOnly = await issueAccessToken(t, user, ['read_activity']);
    const withoutHeart = await fitbitJson<{ summary: Record<string, unknown> }>(t, activityOnly.token, '/1/user/-/activities/date/2026-03-29.json');
    assert.equal(withoutHeart.summary.activityCalories, (20 + 25 + 7) / 10);
    assert.equal(withoutHeart.summary.heartRateZones, undefined);
    const empty = await fitbitJson<{ summary: Record<string, unknown> }>(t, token, '/1/user/-/activities/date/2026-03-31.json');
    assert.deepEqual([empty.summary.caloriesOut, empty.summary.activityCalories], [0, 0]);
  });
});
