/**
 * Overlapping sleep sessions sent at once to two server processes sharing one SQLite file
 * (store/sleep.ts): each save takes the write lock before it looks for overlaps (BEGIN
 * IMMEDIATE), so of two overlapping sessions one is stored and the other refused with 409 — never
 * both, and never a 503 for the one that lost a race to write. Run by test/processes.test.ts, on
 * the processes it shares between such files.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { night, SLEEP } from '../api/sleep-support.js';
import { utc } from '../api/steps-support.js';
import { tokenKey } from '../../src/security/secrets.js';
import { seedClient } from '../support/fault-load.js';
import type { ServerPair } from '../support/server-pair.js';

const ROUNDS = 8;

export function sleepAcrossProcesses(pair: () => ServerPair): void {
  it('store one of two overlapping sessions sent at once to two processes, and refuse the other', async () => {
    const { database, origins } = pair();
    const seeded = await seedClient(database.db, 1);
    // Its grant and tokens hold the sleep scopes (the processes' other users keep theirs).
    const scope = 'read_sleep write_sleep';
    const { kysely } = database.db;
    const { grant_id } = await kysely.selectFrom('access_tokens').select('grant_id').where('token_key', '=', tokenKey(seeded.accessToken)).executeTakeFirstOrThrow();
    await kysely.updateTable('grants').set({ scope }).where('id', '=', grant_id).execute();
    await kysely.updateTable('access_tokens').set({ scope }).where('grant_id', '=', grant_id).execute();
    const headers = { authorization: `Bearer ${seeded.accessToken}`, 'content-type': 'application/json' };
    const answers = await Promise.all(
      Array.from({ length: ROUNDS }, (_, round) => {
        const start = utc(2024, 5, 1 + round, 22);
        return Promise.all([night(start, [['light', 400]]), night(start + 900, [['deep', 400]])].map((body, i) =>
          fetch(`${origins[i]}${SLEEP}`, { method: 'POST', headers, body: JSON.stringify(body) }).then(async (answer) => `${answer.status} ${await answer.text()}`),
        ));
      }),
    );
    for (const pair of answers) assert.deepEqual(pair.map((answer) => answer.slice(0, 3)).sort(), ['200', '409'], pair.join('\n'));
    const read = await fetch(`${origins[0]}${SLEEP}?start_date=2024-05-01&end_date=2024-05-31`, { headers });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { sleep: unknown[] }).sleep.length, ROUNDS);
  });
}
