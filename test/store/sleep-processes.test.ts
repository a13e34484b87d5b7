/**
 * Overlapping sleep sessions sent at once to two server processes sharing one SQLite file
 * (store/sleep.ts): each save takes the write lock before it looks for overlaps (BEGIN
 * IMMEDIATE), so of two overlapping sessions one is stored and the other refused with 409 — never
 * both, and never a 503 for the one that lost a race to write.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { night, SLEEP } from '../api/sleep-support.js';
import { utc } from '../api/steps-support.js';
import { freePort, startServer } from '../support/cli.js';
import { seedClient } from '../support/fault-load.js';

const ROUNDS = 8;

const dir = mkdtempSync(join(tmpdir(), 'stride-sleep-processes-'));
const servers: ChildProcess[] = [];
after(() => {
  for (const server of servers) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

it('store one of two overlapping sessions sent at once to two processes, and refuse the other', async () => {
  const url = `sqlite:${join(dir, 'stride.sqlite')}`;
  const db = openDatabase(url);
  await migrateToLatest(db);
  const seeded = await seedClient(db, 1);
  const scope = 'read_sleep write_sleep';
  await db.kysely.updateTable('grants').set({ scope }).execute();
  await db.kysely.updateTable('access_tokens').set({ scope }).execute();
  await db.close();
  const origins: string[] = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    origins.push(`http://127.0.0.1:${port}`);
    servers.push(await startServer(port, { DATABASE_URL: url, PUBLIC_URL: origins[i]!, RATE_LIMIT: 'off' }));
  }
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
