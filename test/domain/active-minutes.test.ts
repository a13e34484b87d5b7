/**
 * The zones and active minutes of a person's dates as routes get them (domain/active-minutes.ts):
 * `dailyActivity` reading a person's minutes from the database and counting them as the daily
 * summary shows them.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { dailyActivity } from '../../src/domain/active-minutes.js';
import { parseDateRange } from '../../src/domain/local-dates.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { uploadEveryKind } from '../support/person-uploads.js';
import { bearer, issueAccessToken, userWithToken } from '../support/tokens.js';

forEachDialect('daily activity of a person', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(Date.UTC(2024, 9, 29, 12) / 1000);
  });
  after(() => t.close());

  it('reads and counts each date of a range as the daily summary shows it', async () => {
    const { user, token } = await userWithToken(t, { timezone: 'Europe/Berlin' });
    await uploadEveryKind(t, token, 4, 5);
    const put = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { birth_year: 1970 } });
    assert.equal(put.statusCode, 200, put.body);
    const profile = put.json();
    const query = { start_date: '2024-10-26', end_date: '2024-10-29' };
    const range = parseDateRange(query, profile.timezone, t.clock(), { defaultDays: 1, maxDays: 366 });
    const activity = await dailyActivity(t.database.stores.summary, { userId: user.id, profile }, range);
    assert.deepEqual(activity.map((day) => [day.date, day.max_heart_rate]), [['2024-10-26', 166], ['2024-10-27', 166], ['2024-10-28', 166], ['2024-10-29', 166]]);
    // 220 − 54: fat burn from 83, cardio from ⌈116.2⌉, peak from ⌈141.1⌉.
    assert.deepEqual(Object.values(activity[0]!.heart_rate_zones!).map(({ min, max }) => [min, max]), [[25, 82], [83, 116], [117, 141], [142, 166]]);
    const reader = await issueAccessToken(t, user, ['read_activity', 'read_heartrate']);
    const summary = await t.app.inject({ method: 'GET', url: `/v1/users/me/summary/daily/?start_date=${query.start_date}&end_date=${query.end_date}`, headers: bearer(reader.token) });
    const days = summary.json().days as Array<Record<string, unknown>>;
    assert.equal(days.length, 4);
    for (const [i, day] of activity.entries()) {
      const zones = Object.fromEntries(Object.entries(day.heart_rate_zones!).map(([name, zone]) => [name, zone.minutes]));
      const { date, sedentary_minutes, lightly_active_minutes, fairly_active_minutes, very_active_minutes, active_zone_minutes } = day;
      assert.deepEqual(
        { date, sedentary_minutes, lightly_active_minutes, fairly_active_minutes, very_active_minutes, active_zone_minutes, heart_rate_zones: zones },
        { date: days[i]!.date, sedentary_minutes: days[i]!.sedentary_minutes, lightly_active_minutes: days[i]!.lightly_active_minutes, fairly_active_minutes: days[i]!.fairly_active_minutes, very_active_minutes: days[i]!.very_active_minutes, active_zone_minutes: days[i]!.active_zone_minutes, heart_rate_zones: days[i]!.heart_rate_zones },
      );
      // Every minute of the date is in a level, asleep or unmeasured: 25 hours on the 27th.
      const minutes = day.sedentary_minutes + day.lightly_active_minutes + day.fairly_active_minutes + day.very_active_minutes + day.asleep_minutes + day.unmeasured_minutes;
      assert.equal(minutes, date === '2024-10-27' ? 1500 : 1440, date);
    }
    assert.ok(activity.some((day) => day.active_zone_minutes! > 0 && day.asleep_minutes > 0));
  });
});
