/**
 * "Not more than a day ahead of the server's clock" is one bound and one wording (clock.ts): what
 * the API's schema answers for a minute too far ahead is word for word what the hand checks of the
 * domain say for the same field (`stride import`, the Takeout import, the checks after a schema),
 * and each of them refuses one second past the bound and accepts the bound itself. SQLite only:
 * the database plays no part in the words.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { MAX_AHEAD_SECONDS } from '../../src/domain/future-times.js';
import { weightProblem } from '../../src/domain/body-weight.js';
import { heartRateMinuteProblem, readingProblem } from '../../src/domain/heart-rate-readings.js';
import { minuteStartProblem } from '../../src/domain/minute-samples.js';
import { sessionProblem } from '../../src/domain/sleep-sessions.js';
import { sampleProblem } from '../../src/domain/step-samples.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { bearer, userWithToken } from '../support/tokens.js';
import { pathOf } from './sum-metrics-support.js';

let t: TestApp;
before(async () => {
  t = await createTestApp('sqlite');
});
after(() => t.close());

it("words a time too far ahead the same from the API's schema and from the domain's own checks", async () => {
  const { token } = await userWithToken(t);
  const now = t.clock();
  const ahead = Math.floor((now + MAX_AHEAD_SECONDS) / 60) * 60 + 60;
  const response = await t.app.inject({ method: 'POST', url: pathOf('distance'), headers: bearer(token), payload: { samples: [{ start_time: ahead, value: 1 }] } });
  assert.equal(response.statusCode, 400);
  const fromSchema: string = response.json().error_description;
  assert.equal(fromSchema, "body/samples/0/start_time is more than a day ahead of the server's clock");

  const at = 'body/samples/0/';
  const fromDomain = [
    minuteStartProblem(ahead, now, at),
    heartRateMinuteProblem({ start_time: ahead, avg: 70, min: 60, max: 80 }, now, at),
    readingProblem({ time: ahead, bpm: 70 }, now, at)?.replace(`${at}time`, `${at}start_time`),
    sessionProblem({ start_time: ahead - 60, end_time: ahead, stages: [] } as never, now, at)?.replace(`${at}end_time`, `${at}start_time`),
    weightProblem({ time: ahead, kg: 70 } as never, now, at)?.replace(`${at}time`, `${at}start_time`),
    `${at}${sampleProblem({ start_time: ahead, value: 1 }, now, new Set())}`,
  ];
  for (const words of fromDomain) assert.equal(words, fromSchema);

  // The steps upload words its refusals its own way (docs/api.md), with the same words for the time.
  const steps = await t.app.inject({ method: 'POST', url: pathOf('steps'), headers: bearer(token), payload: { samples: [{ start_time: ahead, value: 1 }] } });
  assert.equal(steps.json().error_description, "samples[0] start_time is more than a day ahead of the server's clock; nothing was written");
});

it('accepts a time exactly a day ahead, in the schema and in the hand checks alike', async () => {
  const { token } = await userWithToken(t);
  const now = t.clock();
  const bound = Math.floor((now + MAX_AHEAD_SECONDS) / 60) * 60;
  const response = await t.app.inject({ method: 'POST', url: pathOf('distance'), headers: bearer(token), payload: { samples: [{ start_time: bound, value: 1 }] } });
  assert.ok(response.statusCode < 300, response.body);
  assert.equal(minuteStartProblem(bound, now, ''), null);
  assert.equal(readingProblem({ time: now + MAX_AHEAD_SECONDS, bpm: 70 }, now, ''), null);
  assert.equal(minuteStartProblem(now + MAX_AHEAD_SECONDS + 1, now, '')?.startsWith('start_time is more than a day ahead'), true);
});
