/**
 * The sleep and body weight stores (store/sleep.ts, store/body-weight.ts) below the API: export
 * pages, and what a year of a person's nights and weights costs on disk.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import type { SleepStage, SleepStageName } from '../../src/store/sleep.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';

const FIRST_NIGHT = Date.UTC(2025, 0, 1, 22) / 1000;
const change = { now: FIRST_NIGHT, coalesceSeconds: 0, dateOf: (time: number) => new Date(time * 1000).toISOString().slice(0, 10) };

/** A plausible night: about forty stages of whole minutes, from 22:00 plus some minutes. */
function nightOf(day: number): { start_time: number; end_time: number; stages: SleepStage[] } {
  const start = FIRST_NIGHT + day * 86_400 + ((day * 37) % 90) * 60;
  const kinds: SleepStageName[] = ['light', 'deep', 'light', 'rem', 'awake'];
  const stages: SleepStage[] = [];
  let time = start;
  for (let i = 0; i < 40; i++) {
    const minutes = 3 + ((day * 13 + i * 7) % 20);
    stages.push({ stage: kinds[(day + i) % kinds.length]!, start_time: time, end_time: time + minutes * 60 });
    time += minutes * 60;
  }
  return { start_time: start, end_time: time, stages };
}

async function insertUser(database: TestDatabase): Promise<string> {
  const id = randomUUID();
  await database.db.kysely.insertInto('users').values({ id, email: `${id}@example.test`, password_hash: 'x', display_name: 'S', stride_length_cm: null, created_at: 0, updated_at: 0 }).execute();
  return id;
}

forEachDialect('sleep and body weight stores', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect);
  });
  after(() => database.drop());

  it('page through every session and measurement of a person for an export', async () => {
    const { sleep, bodyWeight } = database.stores;
    const userId = await insertUser(database);
    const other = await insertUser(database);
    const nights = Array.from({ length: 25 }, (_, day) => nightOf(day));
    for (const night of nights) {
      assert.ok('saved' in (await sleep.save(userId, night, change)));
      await bodyWeight.save(userId, { time: night.end_time, kg_hundredths: 7000 + night.stages.length, fat_hundredths: null }, change);
    }
    await sleep.save(other, nights[3]!, change);
    await bodyWeight.save(other, { time: 5, kg_hundredths: 9000, fat_hundredths: 2000 }, change);

    const sessions = [];
    for (let after = -1; ;) {
      const page = await sleep.sessionsAfter(userId, after, 7);
      if (page.length === 0) break;
      sessions.push(...page);
      after = page[page.length - 1]!.start_time;
    }
    assert.deepEqual(sessions.map(({ id: _id, ...session }) => session), nights);
    const weights = [];
    for (let after = -1; ;) {
      const page = await bodyWeight.weightsAfter(userId, after, 10);
      if (page.length === 0) break;
      weights.push(...page);
      after = page[page.length - 1]!.time;
    }
    assert.deepEqual(weights.map((w) => w.time), nights.map((n) => n.end_time));
    assert.ok(weights.every((w) => w.kg_hundredths === 7040 && w.fat_hundredths === null));
  });

  if (dialect === 'sqlite') {
    it('keep a year of nights and daily weights in well under 300 bytes a person-day', async () => {
      const { sleep, bodyWeight } = database.stores;
      const days = 365;
      const measure = async () =>
        Number((await sql<{ bytes: number }>`select sum(pgsize) as bytes from dbstat where name in ('sleep_sessions', 'body_weights')`.execute(database.db.kysely)).rows[0]!.bytes);
      const before = await measure();
      for (let person = 0; person < 3; person++) {
        const userId = await insertUser(database);
        for (let day = 0; day < days; day++) {
          const night = nightOf(day + 100);
          await sleep.save(userId, night, change);
          await bodyWeight.save(userId, { time: night.end_time + 600, kg_hundredths: 7000 + day, fat_hundredths: 2000 + day }, change);
        }
      }
      const perDay = (await measure() - before) / (3 * days);
      console.log(`# ${perDay.toFixed(0)} bytes a person-day`);
      assert.ok(perDay < 300, `${perDay.toFixed(0)} bytes a person-day`);
    });
  }
});
