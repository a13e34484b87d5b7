/**
 * Uploads to one day from two server processes sharing one SQLite file (store/steps.ts): each
 * takes the write lock before it reads the day (BEGIN IMMEDIATE), so neither loses the other's
 * minutes.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { STEPS, utc } from '../api/steps-support.js';
import { freePort, startServer } from '../support/cli.js';
import { seedClient } from '../support/fault-load.js';

const DAY = utc(2024, 4, 2);
const UPLOADS = 16;

const dir = mkdtempSync(join(tmpdir(), 'stride-steps-processes-'));
const servers: ChildProcess[] = [];
after(() => {
  for (const server of servers) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

it('keep every minute of uploads to one day sent at once to two processes', async () => {
  const url = `sqlite:${join(dir, 'stride.sqlite')}`;
  const db = openDatabase(url);
  await migrateToLatest(db);
  const seeded = await seedClient(db, 1);
  await db.close();
  const origins: string[] = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    origins.push(`http://127.0.0.1:${port}`);
    servers.push(await startServer(port, { DATABASE_URL: url, PUBLIC_URL: origins[i]!, RATE_LIMIT: 'off' }));
  }
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
