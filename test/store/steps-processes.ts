/**
 * Uploads to one day from two server processes sharing one SQLite file (store/steps.ts): each
 * takes the write lock before it reads the day (BEGIN IMMEDIATE), so neither loses the other's
 * minutes. Run by test/processes.test.ts, on the processes it shares between such files.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { STEPS, utc } from '../api/steps-support.js';
import { seedClient } from '../support/fault-load.js';
import type { ServerPair } from '../support/server-pair.js';

const DAY = utc(2024, 4, 2);
const UPLOADS = 16;

export function stepsAcrossProcesses(pair: () => ServerPair): void {
  it('keep every minute of uploads to one day sent at once to two processes', async () => {
    const { database, origins } = pair();
    const seeded = await seedClient(database.db, 1);
    const headers = { authorization: `Bearer ${seeded.accessToken}`, 'content-type': 'application/json' };
    const answers = await Promise.all(
      Array.from({ length: UPLOADS }, (_, i) => {
        const samples = [];
        for (let m = i; m < 1440; m += UPLOADS) samples.push({ start_time: DAY + m * 60, value: i + 1 });
        return fetch(`${origins[i % 2]}${STEPS}`, { method: 'POST', headers, body: JSON.stringify({ samples }) });
      }),
    );
    for (const answer of answers) assert.equal(answer.status, 200, await answer.text());
    const read = await fetch(`${origins[0]}${STEPS}?start_time=${DAY}&end_time=${DAY + 86_400}&granularity=minute&timezone=UTC`, { headers });
    assert.equal(read.status, 200);
    const series = (await read.json()) as { steps: Array<{ value: number }> };
    assert.deepEqual(series.steps.map((b) => b.value), Array.from({ length: 1440 }, (_, m) => (m % UPLOADS) + 1));
  });
}
