/**
 * The zones and active minutes of a person's dates as routes get them (domain/active-minutes.ts):
 * kept counts that are those activityOfDays counts, a date counted again exactly when what it was
 * counted from changed, and `dailyActivity` reading a person's minutes from the database as the
 * daily summary shows them.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { planBuckets } from '../../src/calendar/step-buckets.js';
import { dailyActivity, keptDayActivity } from '../../src/domain/active-minutes.js';
import { activityOfDays } from '../../src/domain/daily-activity.js';
import { datesOfDays, parseDateRange } from '../../src/domain/local-dates.js';
import { NO_CALORIES, NO_STEPS, type SleepSpan } from '../../src/store/minute-days.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { uploadEveryKind } from '../support/person-uploads.js';
import { bearer, issueAccessToken, userWithToken } from '../support/tokens.js';

const DAY = 86_400;
const FIRST_DAY = Date.UTC(2024, 5, 1) / 1000;

/** Four UTC days of made-up minutes from FIRST_DAY, fresh arrays each call. */
function madeUpDays(sleep: SleepSpan[] = [{ start_time: FIRST_DAY + DAY - 7200, end_time: FIRST_DAY + DAY + 21_600 }]): { steps: Map<number, Int32Array>; heartRate: Map<number, Uint8Array>; calories: Map<number, Int32Array>; sleep: SleepSpan[] } {
  const steps = new Map<number, Int32Array>();
  const heartRate = new Map<number, Uint8Array>();
  const calories = new Map<number, Int32Array>();
  for (let d = 0; d < 4; d++) {
    const stepMinutes = new Int32Array(1440).fill(NO_STEPS);
    const bpm = new Uint8Array(1440);
    const tenths = new Int32Array(1440).fill(NO_CALORIES);
    for (let m = 0; m < 1440; m++) {
      bpm[m] = 55 + ((m * 7 + d * 13) % 110);
      if (m % 3 === 0) stepMinutes[m] = (m * 11 + d) % 160;
      if (m % 2 === 0) tenths[m] = 10 + ((m + d) % 90);
    }
    steps.set(FIRST_DAY + d * DAY, stepMinutes);
    heartRate.set(FIRST_DAY + d * DAY, bpm);
    calories.set(FIRST_DAY + d * DAY, tenths);
  }
  return { steps, heartRate, calories, sleep };
}

/** The three local dates from 1 to 3 June 2024 in `zone`. */
function datesIn(zone: string, from = FIRST_DAY + DAY / 2, to = FIRST_DAY + 3 * DAY - 7 * 3600) {
  const { boundaries } = planBuckets(zone, 'day', from, to);
  return { boundaries, dates: datesOfDays(boundaries, zone) };
}

const PROFILE = { max_heart_rate: 190, birth_year: null };

it('counts what activityOfDays counts, in zones whose days are UTC days, cut hours or cut half hours', () => {
  for (const zone of ['UTC', 'Europe/Berlin', 'Asia/Kolkata']) {
    const counted = keptDayActivity();
    const { boundaries, dates } = datesIn(zone);
    const days = madeUpDays();
    const expected = activityOfDays(boundaries, dates, days, PROFILE);
    assert.ok(expected.some((day) => day.asleep_minutes > 0) && expected.every((day) => day.fairly_active_minutes > 0 && day.activity_calories > 0 && day.heart_rate_zones!.peak.calories > 0));
    assert.deepEqual(counted('ada', boundaries, dates, days, PROFILE), expected, zone);
    assert.deepEqual(counted('ada', boundaries, dates, days, PROFILE), expected, `${zone}, kept`);
  }
});

it('counts a date again exactly when a day of its minutes, a session covering it or its maximum changed', () => {
  const counted = keptDayActivity();
  const { boundaries, dates } = datesIn('Asia/Kolkata');
  const days = madeUpDays();
  const first = counted('ada', boundaries, dates, days, PROFILE);
  assert.equal(first.length, 3);
  const same = (a: readonly object[], b: readonly object[]) => a.map((day, i) => day === b[i]);
  assert.deepEqual(same(counted('ada', boundaries, dates, days, PROFILE), first), [true, true, true], 'nothing changed');
  // Another array for 2 June UTC: the two Kolkata dates that touch it (2 and 3 June) are counted again.
  const changed = { ...days, steps: new Map(days.steps).set(FIRST_DAY + DAY, days.steps.get(FIRST_DAY + DAY)!.slice()) };
  const afterSteps = counted('ada', boundaries, dates, changed, PROFILE);
  assert.deepEqual(same(afterSteps, first), [true, false, false]);
  // Another array of calories for 1 June UTC: the two Kolkata dates that touch it (1 and 2 June), with them.
  const moreCalories = { ...changed, calories: new Map(changed.calories).set(FIRST_DAY, changed.calories.get(FIRST_DAY)!.map((tenths) => (tenths < 0 ? tenths : tenths + 1))) };
  const recounted = counted('ada', boundaries, dates, moreCalories, PROFILE);
  assert.deepEqual(same(recounted, afterSteps), [false, false, true]);
  assert.ok(recounted[0]!.activity_calories > afterSteps[0]!.activity_calories);
  assert.deepEqual(recounted, activityOfDays(boundaries, dates, moreCalories, PROFILE));
  // A session that ends a minute later, on 2 June.
  const later = { ...changed, sleep: [{ ...changed.sleep[0]!, end_time: changed.sleep[0]!.end_time + 60 }] };
  const afterSleep = counted('ada', boundaries, dates, later, PROFILE);
  assert.equal(afterSleep[1]!.asleep_minutes, first[1]!.asleep_minutes + 1);
  // Another maximum; and another person with the same minutes is counted for them.
  const lower = counted('ada', boundaries, dates, later, { max_heart_rate: 150, birth_year: null });
  assert.ok(lower.every((day, i) => day !== afterSleep[i] && day.max_heart_rate === 150));
  assert.ok(counted('grace', boundaries, dates, later, PROFILE).every((day, i) => day !== afterSleep[i]));
  assert.deepEqual(counted('grace', boundaries, dates, later, PROFILE), activityOfDays(boundaries, dates, later, PROFILE));
});

it('keeps at most its dates, the least recently counted first out', () => {
  const counted = keptDayActivity(2);
  const { boundaries, dates } = datesIn('UTC');
  const days = madeUpDays();
  const first = counted('ada', boundaries, dates, days, PROFILE);
  const again = counted('ada', boundaries, dates, days, PROFILE);
  // Three dates through two places: each was pushed out by the time it came round again.
  assert.ok(again.every((day, i) => day !== first[i]));
  assert.deepEqual(again, first);
});

it('tells apart the same instants that are midnights of two dates in zones a day apart', () => {
  const counted = keptDayActivity();
  const days = madeUpDays([]);
  const honolulu = datesIn('Pacific/Honolulu');
  const kiritimati = datesIn('Pacific/Kiritimati');
  assert.deepEqual(honolulu.boundaries, kiritimati.boundaries);
  assert.notDeepEqual(honolulu.dates, kiritimati.dates);
  counted('ada', honolulu.boundaries, honolulu.dates, days, PROFILE);
  assert.deepEqual(counted('ada', kiritimati.boundaries, kiritimati.dates, days, PROFILE).map((day) => day.date), kiritimati.dates);
});

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
