/**
 * Fitbit's body weight (src/api/fitbit/body.ts): the logs and the time series as
 * `/v1/users/me/body/weight/` answers them, in kilograms or pounds; a logged weight stored with its
 * event; the 31-day range limit.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { bearer } from '../../support/tokens.js';
import { FORM, fitbitErrorOf, fitbitGet, fitbitJson, testPeopleWithTokens } from './fitbit-support.js';
import { eventRows } from '../../support/events.js';

const NOW = Date.UTC(2026, 2, 31, 12) / 1000;

interface WeightLog {
  date: string;
  time: string;
  logId: string;
  weight: number;
  fat?: number;
  source: string;
}

forEachDialect('Fitbit-compatible body weight', (dialect) => {
  let t: TestApp;
  let people: Awaited<ReturnType<typeof testPeopleWithTokens>>;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(NOW);
    people = await testPeopleWithTokens(t, NOW, 14);
  });
  after(() => t.close());

  it('answers the weight logs and the weight per date as /v1 does, in kilograms or pounds', async () => {
    for (const { person, token } of people) {
      const v1 = (await t.app.inject({ method: 'GET', url: '/v1/users/me/body/weight/?start_date=2026-03-18&end_date=2026-03-31', headers: bearer(token) })).json() as { weight: Array<{ id: string; kg: number; fat_percent: number | null }> };
      assert.ok(v1.weight.length >= 3, `${person.life} weighed in`);
      const { weight } = await fitbitJson<{ weight: WeightLog[] }>(t, token, '/1/user/-/body/log/weight/date/2026-03-18/2026-03-31.json');
      assert.deepEqual(weight.map((log) => [log.logId, log.weight, log.fat ?? null]), v1.weight.map((w) => [w.id, w.kg, w.fat_percent]));
      const { weight: pounds } = await fitbitJson<{ weight: WeightLog[] }>(t, token, '/1/user/-/body/log/weight/date/2026-03-31/1m.json', { 'accept-language': 'en_US' });
      assert.deepEqual(pounds.map((log) => log.weight), v1.weight.map((w) => Math.round((w.kg / 0.45359237) * 100) / 100));

      const series = await fitbitJson<{ 'body-weight': Array<{ dateTime: string; value: string }> }>(t, token, '/1/user/-/body/weight/date/2026-03-31/1w.json');
      assert.equal(series['body-weight'].length, 7);
      for (const day of series['body-weight']) {
        const ofDate = weight.filter((log) => log.date === day.dateTime);
        assert.equal(day.value, ofDate.length === 0 ? '0' : String(ofDate.at(-1)!.weight));
      }
    }
    const tooLong = await fitbitGet(t, people[0]!.token, '/1/user/-/body/log/weight/date/2026-01-01/2026-03-31.json');
    assert.deepEqual([tooLong.statusCode, fitbitErrorOf(tooLong.body).fieldName], [400, 'end-date']);
  });

  it('logs a weight from form fields in the unit of Accept-Language, tells the apps, and deletes it', async () => {
    const { person, token } = people[0]!;
    const logged = await t.app.inject({ method: 'POST', url: '/1/user/-/body/log/weight.json', headers: { ...bearer(token), ...FORM, 'accept-language': 'en_US' }, payload: 'weight=165.35&date=2026-03-31&time=07:15:00&fat=21.5' });
    assert.equal(logged.statusCode, 201, logged.body);
    const { weightLog } = logged.json() as { weightLog: WeightLog };
    assert.deepEqual({ ...weightLog, logId: '' }, { date: '2026-03-31', time: '07:15:00', fat: 21.5, logId: '', source: 'API', weight: 165.35 });
    const v1 = (await t.app.inject({ method: 'GET', url: '/v1/users/me/body/weight/?start_date=2026-03-31&end_date=2026-03-31', headers: bearer(token) })).json() as { weight: Array<{ id: string; time: number; kg: number; fat_percent: number | null }> };
    const stored = v1.weight.find((w) => w.id === weightLog.logId)!;
    assert.deepEqual(stored, { id: weightLog.logId, time: Date.UTC(2026, 2, 31, 5, 15) / 1000, kg: 75, fat_percent: 21.5 }, '07:15 in Berlin, 165.35 lb');
    const events = await eventRows(t.database.db.kysely, { userId: person.id, type: 'body.updated' });
    assert.ok(events.some((event) => JSON.parse(event.data).dates.includes('2026-03-31')));

    const bad = await t.app.inject({ method: 'POST', url: '/1/user/-/body/log/weight.json', headers: { ...bearer(token), ...FORM }, payload: 'weight=heavy&date=2026-03-31' });
    assert.deepEqual([bad.statusCode, fitbitErrorOf(bad.body).fieldName], [400, 'weight']);
    const removed = await t.app.inject({ method: 'DELETE', url: `/1/user/-/body/log/weight/${weightLog.logId}.json`, headers: bearer(token) });
    assert.equal(removed.statusCode, 204);
  });
});
