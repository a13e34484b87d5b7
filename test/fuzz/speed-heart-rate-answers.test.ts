/**
 * Kept heart-rate answers (src/domain/heart-rate-answers.ts) against the plain path (every answer
 * written): random sequences of uploads, deletions and reads of two people's heart rate, in zones
 * with half-hour offsets and DST, give byte-identical answers with keeping on and off — with little
 * room for kept answers, so that some are let go. On both databases: what is kept is compared with
 * the rows each database gives back.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { minutesOfReadings } from '../../src/domain/heart-rate-readings.js';
import { seriesChange } from '../../src/domain/minute-samples.js';
import { keptHeartRateAnswers, NO_KEPT_ANSWERS } from '../../src/domain/heart-rate-answers.js';
import { createHeartRateSeriesReader } from '../../src/domain/heart-rate-series.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser } from '../support/tokens.js';
import { propertyRuns } from './runs.js';

/** Midnight UTC on a Sunday of a DST change in New York (November 2, 2025). */
const BASE = 1_762_041_600;
const SPAN_MINUTES = 3 * 1440;

const reading = fc.record({ time: fc.integer({ min: 0, max: SPAN_MINUTES * 60 - 1 }).map((s) => BASE + s), bpm: fc.integer({ min: 30, max: 220 }) });
const action = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('upload' as const), person: fc.nat({ max: 1 }), readings: fc.array(reading, { minLength: 1, maxLength: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), person: fc.nat({ max: 1 }), from: fc.nat({ max: SPAN_MINUTES }), minutes: fc.integer({ min: 1, max: 600 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      person: fc.nat({ max: 1 }),
      granularity: fc.constantFrom('minute' as const, 'hour' as const, 'day' as const),
      timezone: fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'),
      day: fc.nat({ max: 2 }),
      days: fc.integer({ min: 1, max: 2 }),
    }),
  },
  /** The last read again, as an app polling a series does. */
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('again' as const) }) },
);

forEachDialect('kept heart-rate answers against answers written every time', (dialect) => {
  let t: TestApp;
  let people: string[] = [];
  before(async () => {
    t = await createTestApp(dialect);
    people = [(await createUser(t)).id, (await createUser(t)).id];
  });
  after(() => t.close());

  it('answers the same bytes, keeping on and off, for random uploads, deletions and reads', async () => {
    const store = t.app.ctx.stores.heartRate;
    let keptAnswers = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 12 }), async (actions) => {
        for (const person of people) await store.deleteRange(person, BASE - 86_400, BASE + 5 * 86_400, (removed) => seriesChange(removed, 'UTC', BASE, 0));
        // Room for a few days by minute: some answers are let go.
        const room = keptHeartRateAnswers(400_000);
        const kept = createHeartRateSeriesReader(store.readDays, {
          find: (...args) => {
            const found = room.find(...args);
            if (found !== undefined) keptAnswers++;
            return found;
          },
          keep: (...args) => room.keep(...args),
          get bytes() {
            return room.bytes;
          },
        });
        const plain = createHeartRateSeriesReader(store.readDays, NO_KEPT_ANSWERS);
        let last: { userId: string; request: Parameters<typeof kept>[1] } | undefined;
        for (const step of actions) {
          if (step.kind === 'again') {
            if (last === undefined) continue;
            const [fromKept, fromPlain] = [await kept(last.userId, last.request), await plain(last.userId, last.request)];
            assert.ok(fromKept.equals(fromPlain), `${JSON.stringify(last.request)} again: ${fromKept.length} bytes kept, ${fromPlain.length} written`);
            continue;
          }
          const userId = people[step.person]!;
          if (step.kind === 'upload') {
            const minutes = minutesOfReadings(step.readings);
            await store.upsertSamples(userId, minutes, seriesChange(minutes.map((minute) => minute.start_time), 'UTC', BASE, 0));
          } else if (step.kind === 'delete') {
            const from = BASE + step.from * 60;
            await store.deleteRange(userId, from, from + step.minutes * 60, (removed) => seriesChange(removed, 'UTC', BASE, 0));
          } else {
            const start = BASE + step.day * 86_400;
            const request = { granularity: step.granularity, timezone: step.timezone, start, end: start + (step.granularity === 'minute' ? 86_400 : step.days * 86_400) };
            const [fromKept, fromPlain] = [await kept(userId, request), await plain(userId, request)];
            assert.ok(fromKept.equals(fromPlain), `${JSON.stringify(request)}: ${fromKept.length} bytes kept, ${fromPlain.length} written`);
            last = { userId, request };
          }
        }
      }),
      propertyRuns(25),
    );
    assert.ok(keptAnswers > 10, `${keptAnswers} answers came from the kept ones`);
  });
});
