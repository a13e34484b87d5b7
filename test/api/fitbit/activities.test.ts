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
import { readHeartRate } from '../heartrate-support.js';
import { readMetric, type Metric } from '../sum-metrics-support.js';
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
      // 1sec answers the minutes Stride holds.
      const seconds = await fitbitJson<{ 'activities-heart-intraday': { dataset: unknown[] } }>(t, token, `/1/user/-/activities/heart/date/${date}/1d/1sec.json`);
      assert.deepEqual(seconds['activities-heart-intraday'].dataset, body['activities-heart-intraday'].dataset);

      const days = (await readHeartRate(t, token, { start_time: midnight('2026-03-25', zone), end_time: nextMidnight('2026-03-31', zone), granularity: 'day', timezone: zone })).heartrate;
      const week = await fitbitJson<{ 'activities-heart': Array<{ dateTime: string; value: { restingHeartRate?: number } }> }>(t, token, '/1/user/-/activities/heart/date/2026-03-31/1w.json');
      assert.deepEqual(week['activities-heart'].map((day) => day.value.restingHeartRate ?? null), days.map((bucket) => bucket.resting ?? null));
      assert.ok(days.some((bucket) => typeof bucket.resting === 'number'));
    }
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
});
