/**
 * PostgreSQL going away under load, on a cluster of the test's own, with a real `stride serve`:
 * stopped (as by a crash, and cleanly), its backends terminated. While it is away every answer is
 * a success or a 503 `temporarily_unavailable` with Retry-After — never a 500, never a hang, never
 * a crash — /readyz says 503, and the same process serves again once the database is back.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freePort, startServer } from '../support/cli.js';
import { assertSuccessOr503, assertTemporarilyUnavailable, countByStatus, seedClient, startLoad, type Answer, type Seeded } from '../support/fault-load.js';
import { createPostgresCluster, postgresClusterUnavailable, type PostgresCluster } from '../support/postgres-cluster.js';

const skip = postgresClusterUnavailable();
if (skip) console.log(`# skipping the PostgreSQL fault tests: ${skip}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Longest a request may take while the database is away (the pool's connect timeout is 5 s). */
const BOUND_MS = 7000;

describe('PostgreSQL faults under load', { skip: skip ?? false }, () => {
  let cluster: PostgresCluster;
  let server: ChildProcess;
  let serverOutput = '';
  let baseUrl: string;
  let seeded: Seeded;

  before(async () => {
    cluster = await createPostgresCluster();
    const db = openDatabase(cluster.url);
    await migrateToLatest(db);
    seeded = await seedClient(db, 3);
    await db.close();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = await startServer(port, { DATABASE_URL: cluster.url, PUBLIC_URL: baseUrl, RATE_LIMIT: 'off', LOG_LEVEL: 'warn' });
    server.stdout?.on('data', (chunk) => (serverOutput += chunk));
    server.stderr?.on('data', (chunk) => (serverOutput += chunk));
  });

  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
    }
    await cluster?.destroy();
  });

  const assertAlive = () => assert.equal(server.exitCode, null, `the server exited (${server.exitCode}): ${serverOutput.slice(-2000)}`);

  const readyz = async () => {
    const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(BOUND_MS) });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
  };

  /** Waits until every kind of request has been answered 200 again after `since`. */
  const waitForRecovery = async (answers: Answer[], since: number, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const recovered = (['bearer', 'refresh', 'page'] as const).every((kind) => answers.some((a) => a.kind === kind && a.at > since && a.status === 200));
      if (recovered) return;
      await sleep(50);
    }
    assert.fail(`no recovery within ${timeoutMs} ms: ${JSON.stringify(countByStatus(answers.filter((a) => a.at > since)))}`);
  };

  /** After recovery, a second of load answered only 200s. */
  const assertSteady = async (answers: Answer[]) => {
    const from = Date.now();
    await sleep(1000);
    const later = answers.filter((a) => a.at > from);
    assert.ok(later.length > 10, `too few answers: ${later.length}`);
    assert.deepEqual(later.filter((a) => a.status !== 200).map((a) => `${a.kind} ${a.status} ${a.body.slice(0, 200)}`), []);
  };

  it('answers 503 with Retry-After while PostgreSQL is down (killed), and recovers when it is back, with no restart', async () => {
    const load = startLoad(baseUrl, seeded, { timeoutMs: BOUND_MS });
    try {
      await sleep(400);
      assert.ok(load.answers.some((a) => a.status === 200), 'the load is served before the fault');
      await cluster.stop('immediate');
      const down = Date.now();
      await sleep(1500);
      const ready = await readyz();
      assert.equal(ready.status, 503);
      assert.equal(ready.body.error, 'temporarily_unavailable');
      assert.match(ready.retryAfter ?? '', /^\d+$/);
      assertAlive();
      const whileDown = load.answers.filter((a) => a.at > down + 500);
      for (const kind of ['bearer', 'refresh', 'page'] as const) {
        const answers = whileDown.filter((a) => a.kind === kind);
        assert.ok(answers.length > 0, `${kind} requests were answered while the database was down`);
        for (const answer of answers) assertTemporarilyUnavailable(answer);
      }

      await cluster.start();
      const up = Date.now();
      await waitForRecovery(load.answers, up);
      assert.equal((await readyz()).status, 200);
      await assertSteady(load.answers);
    } finally {
      await load.stop();
    }
    assertAlive();
    assertSuccessOr503(load.answers);
    assert.ok(Math.max(...load.answers.map((a) => a.ms)) < BOUND_MS);
  });

  it('survives pg_terminate_backend on every connection of its pool, mid-load', async () => {
    const load = startLoad(baseUrl, seeded, { timeoutMs: BOUND_MS });
    let terminated = 0;
    try {
      await sleep(300);
      for (let round = 0; round < 5; round++) {
        terminated += await cluster.terminateBackends();
        await sleep(200);
      }
      assert.ok(terminated > 0, 'backends of the server were terminated');
      const since = Date.now();
      await waitForRecovery(load.answers, since);
      await assertSteady(load.answers);
    } finally {
      await load.stop();
    }
    assertAlive();
    assertSuccessOr503(load.answers);
    assert.equal((await readyz()).status, 200);
  });

  it('rides out a clean shutdown and restart of PostgreSQL (admin_shutdown, cannot_connect_now)', async () => {
    const load = startLoad(baseUrl, seeded, { timeoutMs: BOUND_MS });
    try {
      await sleep(300);
      await cluster.stop('fast');
      await sleep(500);
      await cluster.start();
      await waitForRecovery(load.answers, Date.now());
      await assertSteady(load.answers);
    } finally {
      await load.stop();
    }
    assertAlive();
    assertSuccessOr503(load.answers);
    assert.ok(load.answers.some((a) => a.status === 503), 'the outage was seen');
  });
});
