/**
 * Fuzzing the resource API (src/api/routes.ts): the user resource at /v1/users/me and /users
 * (GET, PUT), the collections of steps, distance and calories (GET a series, POST samples,
 * DELETE a range), heart rate (GET a series, POST readings, DELETE a range), sleep sessions and
 * body weight (GET a range of dates, POST one, DELETE one by id), the daily summary, with real bearer tokens of every
 * scope and of one scope mixed in with broken ones.
 */
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { forEachDialect } from '../support/databases.js';
import { hostileJson, hostileText } from './hostile.js';
import { timeZone, unixSeconds } from './plausible.js';
import { createFuzzTarget, fuzz, type FuzzTarget } from './property.js';
import { pathParameter, requestsTo, type Route } from './requests.js';
import { cheapPasswordHashing } from '../support/passwords.js';

/** The fuzz world's account, and those the cases sign up, sign in at the cheap cost: no property here is about hashing. */
cheapPasswordHashing();

/** A JSON value for a field: usually of the right type and near its limits, sometimes anything. */
function jsonField<T>(right: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: right }, { weight: 1, arbitrary: hostileJson });
}

const displayName = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('Walker', 'Ada Lovelace', ' Ada ', 'Zoë', '步行者', 'x'.repeat(100)) }, { weight: 2, arbitrary: hostileText() });
const stepGoal = fc.oneof(fc.integer({ min: -2, max: 200_002 }), fc.constantFrom(0, 1, 200_000, 1.5, 1e21, -0));
const strideLength = fc.oneof(fc.integer({ min: 28, max: 252 }), fc.constant(null), fc.constantFrom(30, 250, 29.9));

/** A change of the profile: most fields plausible, or anything at all. */
const profileChange = fc.oneof(
  fc.record({ display_name: displayName, timezone: timeZone, daily_step_goal: stepGoal, stride_length_cm: strideLength }, { requiredKeys: [] }),
  fc.record(
    {
      display_name: jsonField(displayName),
      timezone: jsonField(timeZone),
      daily_step_goal: jsonField(stepGoal),
      stride_length_cm: jsonField(strideLength),
      id: jsonField(fc.uuid()),
      created_at: jsonField(fc.integer()),
    },
    { requiredKeys: [] },
  ),
);

const now = () => Math.floor(Date.now() / 1000);
const minute = fc.integer({ min: -20_000, max: 2_000 }).map((offset) => now() - (now() % 60) + offset * 60);
const validSample = fc.record({ start_time: minute, value: fc.integer({ min: 0, max: 1000 }) });
const hostileSample = fc.record(
  {
    start_time: jsonField(fc.oneof(minute.map((t) => t + 1), fc.constantFrom(0, -60, 2 ** 53, 1e12), minute)),
    value: jsonField(fc.oneof(fc.integer({ min: -1, max: 1001 }), fc.constantFrom(0, 1000, 0.5))),
    extra: hostileJson,
  },
  { requiredKeys: [] },
);
/** A batch of valid samples, sometimes with one bad one (the whole batch must then be refused). */
const samples = fc
  .tuple(fc.array(validSample, { maxLength: 20 }), fc.option(fc.tuple(fc.nat(), hostileSample), { freq: 2 }))
  .map(([valid, bad]) => (bad === null ? valid : [...valid.slice(0, bad[0] % (valid.length + 1)), bad[1], ...valid.slice(bad[0] % (valid.length + 1))]));
/** A week of minutes is the most one request may carry; one more is refused. */
const fullWeek = fc.constantFrom(10_080, 10_081).map((count) => ({
  samples: Array.from({ length: count }, (_, i) => ({ start_time: now() - (now() % 60) - i * 60, value: i % 1001 })),
}));
const sampleBatch = fc.oneof(
  { weight: 20, arbitrary: fc.record({ samples: fc.oneof({ weight: 4, arbitrary: samples }, { weight: 1, arbitrary: hostileJson }) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fullWeek },
);

const reading = fc.record({ time: fc.integer({ min: -20_000 * 60, max: 2_000 * 60 }).map((offset) => now() + offset), bpm: fc.integer({ min: 25, max: 250 }) });
const hostileReading = fc.record(
  {
    time: jsonField(fc.oneof(fc.constantFrom(-1, 0, 2 ** 53, 1e12, 0.5), fc.constant(now() + 86_401))),
    bpm: jsonField(fc.oneof(fc.integer({ min: 20, max: 255 }), fc.constantFrom(24, 251, 70.5, '70'))),
    extra: hostileJson,
  },
  { requiredKeys: [] },
);
/** Readings, sometimes with one bad one (the whole upload must then be refused), or a day once a second and one more. */
const readingBatch = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      samples: fc.oneof(
        { weight: 4, arbitrary: fc.tuple(fc.array(reading, { maxLength: 30 }), fc.option(fc.tuple(fc.nat(), hostileReading), { freq: 2 })).map(([valid, bad]) => (bad === null ? valid : [...valid, bad[1]])) },
        { weight: 1, arbitrary: hostileJson },
      ),
    }, { requiredKeys: [] }),
  },
  { weight: 1, arbitrary: fc.constantFrom(86_400, 86_401).map((count) => ({ samples: Array.from({ length: count }, (_, i) => ({ time: now() - i, bpm: 25 + (i % 226) })) })) },
);
/** A local date near today, or a near miss of one. */
const localDate = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -1200, max: 3 }).map((days) => new Date((now() + days * 86_400) * 1000).toISOString().slice(0, 10)) },
  { weight: 1, arbitrary: fc.constantFrom('2024-02-29', '2023-02-29', '2024-13-01', '2024-00-10', '0000-01-01', '9999-12-31', '2024-1-1', '20240101', '2024-01-01T00:00', '') },
);
const dateRangeFields = { start_date: localDate, end_date: localDate, timezone: timeZone };

const stageName = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('awake', 'light', 'deep', 'rem') }, { weight: 1, arbitrary: fc.constantFrom('nap', 'REM', '', 'unknown') });
/** A session of contiguous stages near now (sessions of one person may overlap: 409), sometimes one stage or field broken. */
const sleepSession = fc
  .tuple(
    fc.integer({ min: -400 * 86_400, max: 86_400 }),
    fc.array(fc.tuple(stageName, fc.oneof(fc.integer({ min: 1, max: 2 * 3600 }), fc.constantFrom(30, 60, 0, -60, 86_401))), { minLength: 1, maxLength: 12 }),
    fc.option(fc.tuple(fc.nat(), fc.constantFrom('start_time', 'end_time', 'stage', 'extra'), hostileJson), { freq: 3 }),
  )
  .map(([offset, parts, broken]) => {
    const start = now() + offset;
    let time = start;
    const stages: Array<Record<string, unknown>> = parts.map(([stage, seconds]) => {
      const piece = { stage, start_time: time, end_time: time + seconds };
      time += seconds;
      return piece;
    });
    if (broken) stages[broken[0] % stages.length]![broken[1]] = broken[2];
    return { start_time: start, end_time: time, stages };
  });
const sleepBody = fc.oneof(
  { weight: 6, arbitrary: sleepSession },
  { weight: 1, arbitrary: fc.record({ start_time: jsonField(unixSeconds.map(Number)), end_time: jsonField(unixSeconds.map(Number)), stages: hostileJson, device: hostileJson }, { requiredKeys: [] }) },
);
const weightBody = fc.record(
  {
    time: jsonField(fc.integer({ min: -2000 * 86_400, max: 2 * 86_400 }).map((offset) => now() + offset)),
    kg: jsonField(fc.oneof(fc.integer({ min: 1900, max: 40_100 }).map((hundredths) => hundredths / 100), fc.constantFrom(70.1, 70.15, 70.155, 19.999, 400.001, 1e308, -0))),
    fat_percent: jsonField(fc.oneof(fc.integer({ min: 50, max: 8000 }).map((hundredths) => hundredths / 100), fc.constant(null), fc.constantFrom(20.125, 0, 75.01))),
    bmi: hostileJson,
  },
  { requiredKeys: ['time', 'kg'] },
);
const recordId = (kind: string) => fc.oneof(fc.constant(`${kind}_AAAAAAAAAAAAAA`), fc.constantFrom('slp_AGZkq4DAXa3fVQ', 'wgt_AGZkq4DAXa3fVQ', `${kind}_`), pathParameter([]));
/** Distance and calories: metres to 2,000, kcal to 100 with one decimal, and numbers just outside. */
const metricValue = fc.oneof(fc.integer({ min: -1, max: 2001 }), fc.constantFrom(0, 0.1, 2.3, 99.9, 100, 100.1, 0.15, 1e-7, 1999.5, 2000));
const metricSample = fc.record({ start_time: minute, value: metricValue });
const metricBatch = fc.oneof(
  { weight: 20, arbitrary: fc.record({ samples: fc.oneof({ weight: 4, arbitrary: fc.array(metricSample, { maxLength: 20 }) }, { weight: 1, arbitrary: samples }, { weight: 1, arbitrary: hostileJson }) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fullWeek },
);
/** A range to delete: usually under the 31-day cap, sometimes just over it. */
const deleteFields = { start_time: unixSeconds, end_time: fc.oneof(unixSeconds, minute.map((t) => String(t + 31 * 86_400)), minute.map((t) => String(t))) };
const seriesFields = { start_time: unixSeconds, end_time: unixSeconds, granularity: fc.constantFrom('minute', 'hour', 'day', 'week', 'DAY', ''), timezone: timeZone };

const bearerRoute = { face: 'api', credentials: 'bearer', rateLimited: true } as const;

export const API_ROUTES: Route[] = [
  ...['/v1/users/me', '/users'].flatMap((path): Route[] => [
    { ...bearerRoute, method: 'GET', path, statuses: [200, 401, 403] },
    { ...bearerRoute, method: 'PUT', path, statuses: [200, 400, 401, 403], json: profileChange },
  ]),
  ...['/v1/users/me/activities/steps', '/v1/users/me/activities/steps/'].flatMap((path): Route[] => [
    {
      ...bearerRoute,
      method: 'GET',
      path,
      statuses: [200, 400, 401, 403],
      fields: { start_time: unixSeconds, end_time: unixSeconds, granularity: fc.constantFrom('minute', 'hour', 'day', 'week', 'DAY', ''), timezone: timeZone },
    },
    { ...bearerRoute, method: 'POST', path, statuses: [200, 400, 401, 403], json: sampleBatch },
    { ...bearerRoute, method: 'DELETE', path, statuses: [200, 400, 401, 403], fields: deleteFields },
  ]),
  ...['distance', 'calories'].flatMap((metric) => [`/v1/users/me/activities/${metric}`, `/v1/users/me/activities/${metric}/`]).flatMap((path): Route[] => [
    { ...bearerRoute, method: 'GET', path, statuses: [200, 400, 401, 403], fields: seriesFields },
    { ...bearerRoute, method: 'POST', path, statuses: [200, 400, 401, 403], json: metricBatch },
    { ...bearerRoute, method: 'DELETE', path, statuses: [200, 400, 401, 403], fields: deleteFields },
  ]),
  ...['/v1/users/me/heartrate', '/v1/users/me/heartrate/'].flatMap((path): Route[] => [
    {
      ...bearerRoute,
      method: 'GET',
      path,
      statuses: [200, 400, 401, 403],
      fields: { start_time: unixSeconds, end_time: unixSeconds, granularity: fc.constantFrom('minute', 'hour', 'day', 'week', ''), timezone: timeZone },
    },
    { ...bearerRoute, method: 'POST', path, statuses: [200, 400, 401, 403], json: readingBatch },
    { ...bearerRoute, method: 'DELETE', path, statuses: [200, 400, 401, 403], fields: { start_time: unixSeconds, end_time: unixSeconds } },
  ]),
  ...['/v1/users/me/sleep', '/v1/users/me/sleep/'].flatMap((path): Route[] => [
    { ...bearerRoute, method: 'GET', path, statuses: [200, 400, 401, 403], fields: dateRangeFields },
    { ...bearerRoute, method: 'POST', path, statuses: [200, 400, 401, 403, 409], json: sleepBody },
  ]),
  { ...bearerRoute, method: 'DELETE', path: '/v1/users/me/sleep/:id', statuses: [200, 401, 403, 404], params: { id: recordId('slp') } },
  ...['/v1/users/me/body/weight', '/v1/users/me/body/weight/'].flatMap((path): Route[] => [
    { ...bearerRoute, method: 'GET', path, statuses: [200, 400, 401, 403], fields: dateRangeFields },
    { ...bearerRoute, method: 'POST', path, statuses: [200, 400, 401, 403], json: weightBody },
  ]),
  { ...bearerRoute, method: 'DELETE', path: '/v1/users/me/body/weight/:id', statuses: [200, 401, 403, 404], params: { id: recordId('wgt') } },
  ...['/v1/users/me/summary/daily', '/v1/users/me/summary/daily/'].map((path): Route => ({ ...bearerRoute, method: 'GET', path, statuses: [200, 400, 401], fields: dateRangeFields })),
];

/** Cases per database in `npm test`. */
const RUNS = 1000;

forEachDialect('fuzzing the resource API', (dialect) => {
  let target: FuzzTarget;
  before(async () => {
    target = await createFuzzTarget(dialect);
  });
  after(() => target.t.close());

  it('answers every malformed, hostile or half-valid request within the error contract', async (context) => {
    await fuzz(context, target, requestsTo(API_ROUTES), RUNS);
  });
});
