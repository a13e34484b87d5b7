/**
 * SQLite's daily totals read as one text (src/store/sqlite/series-totals.ts) against the plain
 * path (the days selected as rows): for random days of random totals, of the user and metric asked
 * about and of others, and a random range, both give the same rows. SQLite only: PostgreSQL has no
 * such path.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { DAY_SECONDS } from '../../src/db/codec/day.js';
import { RANGE } from '../../src/store/sqlite/series-days.js';
import { plainTotals, textTotals } from '../../src/store/sqlite/series-totals.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createUser } from '../support/tokens.js';
import { propertyRuns } from './runs.js';

let t: TestApp;
let people: string[] = [];
before(async () => {
  t = await createTestApp('sqlite');
  people = [(await createUser(t)).id, (await createUser(t)).id];
});
after(() => t.close());

const METRICS = ['steps', 'distance', 'calories'] as const;
const DAYS = 40;

/** A total near the edges: none, small, large, the largest an integer keeps exactly in a JS number and beyond. */
const total = fc.oneof(
  fc.integer({ min: 0, max: 30_000 }),
  fc.constantFrom(0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER),
  fc.bigInt({ min: 0n, max: 2n ** 62n }),
);
const day = fc.record({ person: fc.nat({ max: 1 }), metric: fc.constantFrom(...METRICS), day: fc.integer({ min: -3, max: DAYS }), total });
const range = fc.tuple(fc.integer({ min: -5, max: DAYS + 2 }), fc.integer({ min: 0, max: DAYS + 5 }), fc.integer({ min: -2, max: 2 }));

it('gives the same daily totals as the days selected as rows, for random days and ranges', async () => {
  const db = t.database.db;
  assert.ok(db.dialect === 'sqlite');
  const asText = textTotals(RANGE);
  const asRows = plainTotals(RANGE);
  const base = 1_700_006_400 - (1_700_006_400 % DAY_SECONDS);
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(fc.uniqueArray(day, { selector: (d) => `${d.person} ${d.metric} ${d.day}`, minLength: 5, maxLength: 60 }), range, fc.constantFrom(...METRICS), async (days, [first, length, skew], metric) => {
      await db.kysely.deleteFrom('series_days').execute();
      if (days.length > 0) {
        await db.kysely
          .insertInto('series_days')
          .values(days.map((d) => ({ user_id: people[d.person]!, metric: d.metric, day_start: base + d.day * DAY_SECONDS, total: d.total, hours: new Uint8Array(0), minutes: new Uint8Array(0) })))
          .execute();
      }
      // A range of whole days, now and then starting or ending a few seconds off a midnight.
      const from = base + first * DAY_SECONDS + skew;
      const to = from + length * DAY_SECONDS;
      const [text, rows] = await db.executor.read((connection) => [asText(connection, people[0]!, metric, from, to), asRows(connection, people[0]!, metric, from, to)]);
      assert.deepEqual(text, rows);
      if (rows.length > 0) nonEmpty++;
    }),
    propertyRuns(120),
  );
  assert.ok(nonEmpty > 20, `${nonEmpty} ranges held a day`);
});
