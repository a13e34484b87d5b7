/**
 * Fitbit's sleep logs (src/api/fitbit/sleep.ts) for a test person of each life, the Kolkata
 * night-shift worker among them: the minutes of each log as `/v1/users/me/sleep/` answers them, in
 * the stages shape of version 1.2 and the classic shape of version 1; a logged sleep stored as a
 * session with its event; and its deletion.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { bearer } from '../../support/tokens.js';
import { FORM, fitbitErrorOf, fitbitJson, testPeopleWithTokens } from './fitbit-support.js';
import { eventRows } from '../../support/events.js';

const NOW = Date.UTC(2026, 2, 31, 12) / 1000;

interface StagesLog {
  dateOfSleep: string;
  logId: string;
  minutesAsleep: number;
  minutesAwake: number;
  timeInBed: number;
  duration: number;
  isMainSleep: boolean;
  type: string;
  startTime: string;
  levels: { data: Array<{ dateTime: string; level: string; seconds: number }>; summary: Record<string, { count: number; minutes: number }> };
}

forEachDialect('Fitbit-compatible sleep', (dialect) => {
  let t: TestApp;
  let people: Awaited<ReturnType<typeof testPeopleWithTokens>>;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(NOW);
    people = await testPeopleWithTokens(t, NOW, 4);
  });
  after(() => t.close());

  it('answers each night as /v1 does, in the stages shape and the classic one', async () => {
    for (const { person, token } of people) {
      const v1 = (await t.app.inject({ method: 'GET', url: '/v1/users/me/sleep/?start_date=2026-03-28&end_date=2026-03-31', headers: bearer(token) })).json() as {
        sleep: Array<{ id: string; date: string; minutes_asleep: number; minutes_awake: number; start_time: number; end_time: number; stages: unknown[] }>;
      };
      assert.ok(v1.sleep.length >= 3, `${person.life} slept`);
      const stages = await fitbitJson<{ sleep: StagesLog[]; summary: { totalMinutesAsleep: number; totalSleepRecords: number; stages: Record<string, number> } }>(t, token, '/1.2/user/-/sleep/date/2026-03-28/2026-03-31.json');
      const logs = [...stages.sleep].reverse();
      assert.deepEqual(
        logs.map((log) => [log.logId, log.dateOfSleep, log.minutesAsleep, log.minutesAwake, log.duration]),
        v1.sleep.map((night) => [night.id, night.date, night.minutes_asleep, night.minutes_awake, (night.end_time - night.start_time) * 1000]),
      );
      for (const log of logs) {
        assert.equal(log.type, 'stages');
        assert.equal(log.isMainSleep, true, 'one night a date: each is its main sleep');
        assert.match(log.startTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000$/);
        assert.equal(log.levels.data.reduce((sum, stage) => sum + stage.seconds, 0) * 1000, log.duration);
        assert.ok(log.levels.data.every((stage) => ['wake', 'light', 'deep', 'rem'].includes(stage.level)));
      }
      assert.equal(stages.summary.totalSleepRecords, v1.sleep.length);
      assert.equal(stages.summary.totalMinutesAsleep, v1.sleep.reduce((sum, night) => sum + night.minutes_asleep, 0));

      const last = v1.sleep.at(-1)!;
      const day = await fitbitJson<{ sleep: StagesLog[] }>(t, token, `/1.2/user/-/sleep/date/${last.date}.json`);
      assert.deepEqual(day.sleep.map((log) => log.logId), [last.id]);
      const classic = await fitbitJson<{ sleep: Array<{ logId: string; minutesAsleep: number; minutesAwake: number; minuteData: Array<{ value: string }>; awakeCount: number }> }>(t, token, `/1/user/-/sleep/date/${last.date}.json`);
      assert.equal(classic.sleep.length, 1);
      const [log] = classic.sleep;
      assert.deepEqual([log!.logId, log!.minutesAsleep, log!.minutesAwake], [last.id, last.minutes_asleep, last.minutes_awake]);
      assert.ok(log!.minuteData.length >= last.minutes_asleep + last.minutes_awake - 2);
      assert.ok(log!.minuteData.every((minute) => minute.value === '1' || minute.value === '3'));
    }
  });

  it('logs a sleep from form fields as a session of light sleep, tells the apps, and deletes it', async () => {
    const { person, token } = people[0]!;
    const before = (await eventRows(t.database.db.kysely, { userId: person.id, type: 'sleep.updated' })).length;
    const logged = await t.app.inject({ method: 'POST', url: '/1.2/user/-/sleep.json', headers: { ...bearer(token), ...FORM }, payload: 'date=2026-03-31&startTime=13:30&duration=1800000', });
    assert.equal(logged.statusCode, 201, logged.body);
    const { sleep } = logged.json() as { sleep: StagesLog };
    assert.deepEqual([sleep.minutesAsleep, sleep.timeInBed, sleep.levels.data.map((stage) => stage.level)], [30, 30, ['light']]);
    const v1 = (await t.app.inject({ method: 'GET', url: '/v1/users/me/sleep/?start_date=2026-03-31&end_date=2026-03-31', headers: bearer(token) })).json() as { sleep: Array<{ id: string; minutes_asleep: number }> };
    assert.ok(v1.sleep.some((night) => night.id === sleep.logId && night.minutes_asleep === 30));
    const after = (await eventRows(t.database.db.kysely, { userId: person.id, type: 'sleep.updated' })).length;
    assert.equal(after, before + 1, 'the apps that read sleep hear of it');

    const overlapping = await t.app.inject({ method: 'POST', url: '/1.2/user/-/sleep.json', headers: { ...bearer(token), ...FORM }, payload: 'date=2026-03-31&startTime=13:45&duration=600000' });
    assert.equal(overlapping.statusCode, 409);
    assert.equal(fitbitErrorOf(overlapping.body).errorType, 'validation');
    const bad = await t.app.inject({ method: 'POST', url: '/1.2/user/-/sleep.json', headers: { ...bearer(token), ...FORM }, payload: 'date=2026-03-31&startTime=1:30pm&duration=600000' });
    assert.deepEqual([bad.statusCode, fitbitErrorOf(bad.body).fieldName], [400, 'startTime']);

    const removed = await t.app.inject({ method: 'DELETE', url: `/1.2/user/-/sleep/${sleep.logId}.json`, headers: bearer(token) });
    assert.equal(removed.statusCode, 204);
    const again = await t.app.inject({ method: 'DELETE', url: `/1.2/user/-/sleep/${sleep.logId}.json`, headers: bearer(token) });
    assert.deepEqual([again.statusCode, fitbitErrorOf(again.body).errorType], [404, 'not_found']);
  });
});
