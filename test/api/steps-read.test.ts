import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, userWithToken } from '../support/tokens.js';
import { lengths, postSamples, readSeries, STEPS, utc } from './steps-support.js';

const HOUR = 3600;
const DAY = 86_400;

forEachDialect('steps series', (dialect) => {
  let t: TestApp;
  let token: string;

  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2025, 1, 1));
    ({ token } = await userWithToken(t));
  });
  after(() => t.close());

  async function rejects(query: string, description: RegExp) {
    const response = await t.app.inject({ method: 'GET', url: `${STEPS}/?${query}`, headers: bearer(token) });
    assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
    assert.equal(response.json().error, 'invalid_request');
    assert.match(response.json().error_description, description, query);
  }

  it('answers each bad query with 400 invalid_request and a clear description', async () => {
    await rejects('start_time=abc', /^start_time must be a non-negative integer number of Unix seconds, got "abc"/);
    await rejects('start_time=-60', /^start_time must be a non-negative integer/);
    await rejects('end_time=1.5', /^end_time must be a non-negative integer/);
    await rejects('end_time=', /^end_time must be a non-negative integer/);
    await rejects('end_time=1e9', /^end_time must be a non-negative integer/);
    await rejects('start_time=1&start_time=2', /^start_time must be given at most once/);
    await rejects('start_time=99999999999999', /^start_time must be at most/);
    await rejects('start_time=1000&end_time=999', /^end_time 999 is before start_time 1000/);
    await rejects(`start_time=${utc(2026, 1, 1)}`, /^end_time \(default: now\) \d+ is before start_time/);
    await rejects('granularity=week', /^granularity must be minute, hour or day, got "week"/);
    await rejects('granularity=', /^granularity must be minute, hour or day/);
    await rejects('timezone=Mars/Olympus_Mons', /^timezone must be an IANA time zone name/);
    await rejects('timezone=%2B05:30', /^timezone must be an IANA time zone name/);
    await rejects('start=1', /^unknown query parameter "start"/);
    await rejects(`granularity=minute&start_time=0&end_time=${DAY + 1}`, /longer than 1 day, the most granularity=minute allows/);
    await rejects(`granularity=hour&start_time=0&end_time=${31 * DAY + 1}`, /longer than 31 days, the most granularity=hour allows/);
    await rejects(`start_time=0&end_time=${1095 * DAY + 1}`, /longer than 1095 days, the most granularity=day allows/);
  });

  it('answers a parameter named like an object\'s own members as an unknown one, not a server error', async () => {
    // The query reaches the words of the refusal as an object whose keys are the client's.
    for (const name of ['toString', 'valueOf', 'constructor', '__proto__', 'hasOwnProperty']) {
      await rejects(name, new RegExp(`^unknown query parameter "${name}"`));
      await rejects(`${name}=1&start_time=0`, new RegExp(`^unknown query parameter "${name}"`));
    }
  });

  it('accepts ranges exactly at the caps', async () => {
    const start = utc(2024, 1, 1);
    assert.equal((await readSeries(t, token, { granularity: 'minute', start_time: start, end_time: start + DAY })).steps.length, 1440);
    assert.equal((await readSeries(t, token, { granularity: 'hour', start_time: start, end_time: start + 31 * DAY })).steps.length, 744);
    assert.equal((await readSeries(t, token, { start_time: start, end_time: start + 1095 * DAY })).steps.length, 1095);
  });

  it('defaults to day buckets from the start of the user\u2019s today (profile zone) to now', async () => {
    const { token: kolkata } = await userWithToken(t, { timezone: 'Asia/Kolkata' });
    t.clock.set(utc(2024, 6, 15, 12, 30));
    try {
      await postSamples(t, kolkata, [
        { start_time: utc(2024, 6, 14, 18, 29), value: 7 },
        { start_time: utc(2024, 6, 14, 18, 30), value: 11 },
        { start_time: utc(2024, 6, 15, 12, 0), value: 13 },
      ]);
      const series = await readSeries(t, kolkata, {});
      assert.equal(series.granularity, 'day');
      assert.equal(series.timezone, 'Asia/Kolkata');
      assert.equal(series.start_time, utc(2024, 6, 14, 18, 30));
      assert.equal(series.end_time, utc(2024, 6, 15, 18, 30));
      assert.deepEqual(series.steps.map((b) => b.value), [24]);

      const overridden = await readSeries(t, kolkata, { timezone: 'UTC' });
      assert.equal(overridden.timezone, 'UTC');
      assert.equal(overridden.start_time, utc(2024, 6, 15));
      assert.equal(overridden.total, 13);
    } finally {
      t.clock.set(utc(2025, 1, 1));
    }
  });

  it('returns a dense series with 0 for empty buckets, widened to whole buckets', async () => {
    const { token: own } = await userWithToken(t);
    await postSamples(t, own, [
      { start_time: utc(2024, 5, 1, 8, 0), value: 10 },
      { start_time: utc(2024, 5, 1, 8, 2), value: 20 },
      { start_time: utc(2024, 5, 1, 10, 59), value: 30 },
    ]);
    const minutes = await readSeries(t, own, { granularity: 'minute', start_time: utc(2024, 5, 1, 8) + 30, end_time: utc(2024, 5, 1, 8, 3) + 1 });
    assert.equal(minutes.start_time, utc(2024, 5, 1, 8));
    assert.equal(minutes.end_time, utc(2024, 5, 1, 8, 4));
    assert.deepEqual(minutes.steps.map((b) => b.value), [10, 0, 20, 0]);

    const hours = await readSeries(t, own, { granularity: 'hour', start_time: utc(2024, 5, 1, 7), end_time: utc(2024, 5, 1, 11) });
    assert.deepEqual(hours.steps.map((b) => b.value), [0, 30, 0, 30]);
    assert.deepEqual(hours.steps.map((b) => b.start_time), [7, 8, 9, 10].map((h) => utc(2024, 5, 1, h)));

    const empty = await readSeries(t, own, { start_time: utc(2024, 5, 1), end_time: utc(2024, 5, 1) });
    assert.deepEqual(empty.steps, []);
    assert.equal(empty.total, 0);
  });

  /** One step at the first minute of every UTC hour in [from, to). */
  async function stepEveryHour(own: string, from: number, to: number) {
    const samples: Array<{ start_time: number; value: number }> = [];
    for (let time = from; time < to; time += HOUR) samples.push({ start_time: time, value: 1 });
    await postSamples(t, own, samples);
  }

  it('makes 23- and 25-hour days at the DST changes of Europe/Berlin', async () => {
    const { token: own } = await userWithToken(t, { timezone: 'Europe/Berlin' });
    await stepEveryHour(own, utc(2024, 3, 28), utc(2024, 4, 3));
    await stepEveryHour(own, utc(2024, 10, 24), utc(2024, 10, 30));

    const spring = await readSeries(t, own, { start_time: utc(2024, 3, 30, 12), end_time: utc(2024, 4, 1, 12) });
    assert.deepEqual(spring.steps.map((b) => b.start_time), [utc(2024, 3, 29, 23), utc(2024, 3, 30, 23), utc(2024, 3, 31, 22)]);
    assert.deepEqual(lengths(spring), [24 * HOUR, 23 * HOUR, 24 * HOUR]);
    assert.deepEqual(spring.steps.map((b) => b.value), [24, 23, 24]);

    const autumn = await readSeries(t, own, { start_time: utc(2024, 10, 26, 12), end_time: utc(2024, 10, 28, 12) });
    assert.deepEqual(autumn.steps.map((b) => b.start_time), [utc(2024, 10, 25, 22), utc(2024, 10, 26, 22), utc(2024, 10, 27, 23)]);
    assert.deepEqual(lengths(autumn), [24 * HOUR, 25 * HOUR, 24 * HOUR]);
    assert.deepEqual(autumn.steps.map((b) => b.value), [24, 25, 24]);

    const autumnHours = await readSeries(t, own, { granularity: 'hour', start_time: utc(2024, 10, 26, 22), end_time: utc(2024, 10, 27, 23) });
    assert.equal(autumnHours.steps.length, 25);
    assert.ok(lengths(autumnHours).every((length) => length === HOUR));
    const springHours = await readSeries(t, own, { granularity: 'hour', start_time: utc(2024, 3, 30, 23), end_time: utc(2024, 3, 31, 22) });
    assert.equal(springHours.steps.length, 23);
    assert.equal(springHours.total, 23);
  });

  it('makes 23- and 25-hour days in America/New_York, and the repeated hour two buckets', async () => {
    const { token: own } = await userWithToken(t, { timezone: 'America/New_York' });
    await stepEveryHour(own, utc(2024, 3, 9), utc(2024, 3, 12));
    // Different values in the two 01:00 hours of 3 November: 01:00 EDT (05:00Z) and 01:00 EST (06:00Z).
    await postSamples(t, own, [
      { start_time: utc(2024, 11, 3, 4), value: 1 },
      { start_time: utc(2024, 11, 3, 5), value: 2 },
      { start_time: utc(2024, 11, 3, 6), value: 3 },
      { start_time: utc(2024, 11, 3, 7), value: 4 },
      { start_time: utc(2024, 11, 4, 4, 59), value: 5 },
      { start_time: utc(2024, 11, 4, 5), value: 6 },
    ]);
    const days = await readSeries(t, own, { start_time: utc(2024, 11, 3, 12), end_time: utc(2024, 11, 3, 13) });
    assert.deepEqual(days.steps, [{ start_time: utc(2024, 11, 3, 4), end_time: utc(2024, 11, 4, 5), value: 15 }]);

    const hours = await readSeries(t, own, { granularity: 'hour', start_time: utc(2024, 11, 3, 4), end_time: utc(2024, 11, 3, 8) });
    assert.deepEqual(hours.steps.map((b) => [b.start_time, b.value]), [
      [utc(2024, 11, 3, 4), 1],
      [utc(2024, 11, 3, 5), 2],
      [utc(2024, 11, 3, 6), 3],
      [utc(2024, 11, 3, 7), 4],
    ]);

    const spring = await readSeries(t, own, { start_time: utc(2024, 3, 10, 12), end_time: utc(2024, 3, 10, 13) });
    assert.deepEqual(spring.steps, [{ start_time: utc(2024, 3, 10, 5), end_time: utc(2024, 3, 11, 4), value: 23 }]);
    // 01:00 EST is followed by 03:00 EDT: the skipped hour does not exist.
    const springHours = await readSeries(t, own, { granularity: 'hour', start_time: utc(2024, 3, 10, 5), end_time: utc(2024, 3, 10, 8) });
    assert.deepEqual(springHours.steps.map((b) => b.start_time), [utc(2024, 3, 10, 5), utc(2024, 3, 10, 6), utc(2024, 3, 10, 7)]);
  });

  it('aligns days and hours to half- and quarter-hour zones (Asia/Kolkata, Asia/Kathmandu)', async () => {
    const { token: own } = await userWithToken(t);
    await postSamples(t, own, [
      { start_time: utc(2024, 2, 1, 18, 14), value: 1 },
      { start_time: utc(2024, 2, 1, 18, 15), value: 2 },
      { start_time: utc(2024, 2, 1, 18, 29), value: 4 },
      { start_time: utc(2024, 2, 1, 18, 30), value: 8 },
      { start_time: utc(2024, 2, 1, 18, 45), value: 16 },
    ]);
    const kolkata = await readSeries(t, own, { timezone: 'Asia/Kolkata', start_time: utc(2024, 2, 1, 12), end_time: utc(2024, 2, 2, 12) });
    assert.deepEqual(kolkata.steps, [
      { start_time: utc(2024, 1, 31, 18, 30), end_time: utc(2024, 2, 1, 18, 30), value: 7 },
      { start_time: utc(2024, 2, 1, 18, 30), end_time: utc(2024, 2, 2, 18, 30), value: 24 },
    ]);
    const kathmandu = await readSeries(t, own, { timezone: 'Asia/Kathmandu', start_time: utc(2024, 2, 1, 12), end_time: utc(2024, 2, 2, 12) });
    assert.deepEqual(kathmandu.steps.map((b) => [b.start_time, b.value]), [[utc(2024, 1, 31, 18, 15), 1], [utc(2024, 2, 1, 18, 15), 30]]);
    const kathmanduHours = await readSeries(t, own, {
      timezone: 'Asia/Kathmandu', granularity: 'hour', start_time: utc(2024, 2, 1, 17, 15), end_time: utc(2024, 2, 1, 19, 15),
    });
    assert.deepEqual(kathmanduHours.steps.map((b) => [b.start_time, b.value]), [[utc(2024, 2, 1, 17, 15), 1], [utc(2024, 2, 1, 18, 15), 30]]);
    const kolkataHours = await readSeries(t, own, {
      timezone: 'Asia/Kolkata', granularity: 'hour', start_time: utc(2024, 2, 1, 17, 30), end_time: utc(2024, 2, 1, 19, 30),
    });
    assert.deepEqual(kolkataHours.steps.map((b) => [b.start_time, b.value]), [[utc(2024, 2, 1, 17, 30), 7], [utc(2024, 2, 1, 18, 30), 24]]);
  });

  it('gives the same totals at minute, hour and day granularity in any zone', async () => {
    const { token: own } = await userWithToken(t);
    const samples: Array<{ start_time: number; value: number }> = [];
    let seed = 7;
    for (let time = utc(2024, 8, 9); time < utc(2024, 8, 12); time += 60) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      if (seed % 3 === 0) samples.push({ start_time: time, value: seed % 1001 });
    }
    for (let i = 0; i < samples.length; i += 10_000) await postSamples(t, own, samples.slice(i, i + 10_000));

    for (const timezone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham']) {
      const [day] = (await readSeries(t, own, { timezone, start_time: utc(2024, 8, 10, 12), end_time: utc(2024, 8, 10, 12) + 1 })).steps;
      const range = { timezone, start_time: day!.start_time, end_time: day!.end_time };
      const hours = await readSeries(t, own, { ...range, granularity: 'hour' });
      const minutes = await readSeries(t, own, { ...range, granularity: 'minute' });
      const expected = samples.filter((s) => s.start_time >= day!.start_time && s.start_time < day!.end_time).reduce((a, s) => a + s.value, 0);
      assert.ok(expected > 0);
      assert.equal(day!.value, expected, timezone);
      assert.equal(hours.total, expected, timezone);
      assert.equal(minutes.total, expected, timezone);
      assert.equal(hours.steps.length, 24);
      for (const hour of hours.steps) {
        const inHour = minutes.steps.filter((m) => m.start_time >= hour.start_time && m.start_time < hour.end_time);
        assert.equal(inHour.length, 60);
        assert.equal(hour.value, inHour.reduce((a, m) => a + m.value, 0), `${timezone} ${hour.start_time}`);
      }
    }

    // Several days at once read whole hours plus the quarter-hours around each local midnight.
    for (const timezone of ['Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham', 'Europe/Berlin']) {
      const days = await readSeries(t, own, { timezone, start_time: utc(2024, 8, 9), end_time: utc(2024, 8, 12) });
      assert.ok(days.steps.length >= 3);
      for (const day of days.steps) {
        const expected = samples.filter((s) => s.start_time >= day.start_time && s.start_time < day.end_time).reduce((a, s) => a + s.value, 0);
        assert.equal(day.value, expected, `${timezone} day starting ${day.start_time}`);
      }
    }
  });

  it('never shows one user another user\u2019s steps, whatever the parameters', async () => {
    const alice = await userWithToken(t);
    const bob = await userWithToken(t);
    await postSamples(t, alice.token, [{ start_time: utc(2024, 9, 1, 12), value: 500 }]);
    await postSamples(t, bob.token, [{ start_time: utc(2024, 9, 1, 12, 1), value: 3 }]);
    for (const granularity of ['minute', 'hour', 'day']) {
      for (const timezone of ['UTC', 'Asia/Kolkata']) {
        const query = { granularity, timezone, start_time: utc(2024, 9, 1), end_time: utc(2024, 9, 2) };
        assert.equal((await readSeries(t, bob.token, query)).total, 3);
        assert.equal((await readSeries(t, alice.token, query)).total, 500);
      }
    }
    const wide = await readSeries(t, bob.token, { start_time: 0, end_time: 1095 * DAY });
    assert.equal(wide.total, 0);
  });
});
