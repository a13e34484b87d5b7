/**
 * `stride demo` (src/cli/demo.ts): the demo walker gets 90 days of every kind — steps (and the
 * distance they make), calories, heart rate that follows activity and sleep, nights in stages that
 * cross midnight in Berlin, morning weighings — stored through the stores with their events; and the
 * command runs again, the same day or days later, without failing or doubling a night.
 */
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { after, before, it } from 'node:test';
import { DEMO_USER_EMAIL, storeDemoDays } from '../../src/cli/demo.js';
import { freePort, runCliInProcess } from '../support/cli.js';
import { serveDatabase, type ServedStride } from '../support/app.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('stride demo', (dialect) => {
  let database: TestDatabase;
  let server: ServedStride;
  before(async () => {
    database = await createTestDatabase(dialect);
    server = await serveDatabase(database);
  });
  after(async () => {
    await server.close();
    await database.drop();
  });
  const demo = async () => {
    const run = await runCliInProcess(['demo', '--json'], { DATABASE_URL: database.url, PUBLIC_URL: server.url });
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as { user: Record<string, number | string> };
  };

  it('refuses to point at no server, or at another one, and says what to set', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const alone = await runCliInProcess(['demo'], { DATABASE_URL: database.url, PUBLIC_URL: nobody });
    assert.equal(alone.code, 1);
    assert.match(alone.stderr, new RegExp(`No Stride server answers at ${nobody}`));
    assert.match(alone.stderr, /PORT=<the server's PORT> npm run stride -- demo/);
    assert.match(alone.stderr, /PUBLIC_URL=<the server's PUBLIC_URL> npm run stride -- demo/);
    assert.equal(await database.stores.users.findByEmail(DEMO_USER_EMAIL), undefined, 'nothing was written');

    // A second terminal without the server's PORT: demo's default URL is not the server's.
    const elsewhere = await serveDatabase(database, { PUBLIC_URL: 'http://localhost:4999' });
    try {
      const mismatch = await runCliInProcess(['demo'], { DATABASE_URL: database.url, PUBLIC_URL: elsewhere.url });
      assert.equal(mismatch.code, 1);
      assert.match(mismatch.stderr, /runs with PUBLIC_URL=http:\/\/localhost:4999/);
      assert.match(mismatch.stderr, /Run: PUBLIC_URL=http:\/\/localhost:4999 npm run stride -- demo/);
    } finally {
      await elsewhere.close();
    }

    const other = await createTestDatabase(dialect);
    try {
      const wrongDatabase = await runCliInProcess(['demo'], { DATABASE_URL: other.url, PUBLIC_URL: server.url });
      assert.equal(wrongDatabase.code, 1);
      assert.match(wrongDatabase.stderr, /does not know the demo app: it reads another database/);
      assert.match(wrongDatabase.stderr, /DATABASE_URL=<the server's> npm run stride -- demo/);
    } finally {
      await other.drop();
    }
  });
  const sessionsOf = async (userId: string) => database.stores.sleep.sessionsAfter(userId, -1, 10_000);

  it('gives the demo walker 90 days of every kind, and says what it made', async () => {
    const { user: made } = await demo();
    const user = (await database.stores.users.findByEmail(DEMO_USER_EMAIL))!;
    assert.equal(user.timezone, 'Europe/Berlin');
    assert.equal(made.days, 90);
    const metrics = await database.db.kysely.selectFrom('series_days').select('metric').distinct().where('user_id', '=', user.id).execute();
    assert.deepEqual(metrics.map((row) => row.metric).sort(), ['calories', 'distance', 'heartrate', 'steps']);
    const { stores } = database;
    const steps = await stores.steps.samplesAfter(user.id, -1, 1e6);
    const heartRate = await stores.heartRate.samplesAfter(user.id, -1, 1e6);
    const sessions = await sessionsOf(user.id);
    const weights = await stores.bodyWeight.weightsAfter(user.id, -1, 1e6);
    assert.deepEqual(
      [steps.length, (await stores.calories.samplesAfter(user.id, -1, 1e6)).length, heartRate.length, sessions.length, weights.length],
      [made.step_samples, made.calorie_minutes, made.heart_rate_minutes, made.sleep_sessions, made.weight_measurements],
    );
    assert.ok(steps.length > 90 * 100 && heartRate.length > 90 * 1000 && sessions.length >= 89 && weights.length > 45, JSON.stringify(made));
    assert.equal(typeof made.stored_in_ms, 'number');

    // Nights cross midnight on the walker's clock; the heart beats faster on a brisk walk than asleep.
    const dateOf = (time: number) => DateTime.fromSeconds(time, { zone: 'Europe/Berlin' }).toISODate();
    assert.ok(sessions.filter((s) => dateOf(s.start_time) !== dateOf(s.end_time)).length > 45);
    const asleep = new Set<number>();
    for (const s of sessions) for (const stage of s.stages) if (stage.stage !== 'awake') for (let m = stage.start_time; m < stage.end_time; m += 60) asleep.add(m);
    const walking = new Set(steps.filter((s) => s.value >= 90).map((s) => s.start_time));
    const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
    const sleepingBpm = mean(heartRate.filter((m) => asleep.has(m.start_time)).map((m) => m.avg));
    const walkingBpm = mean(heartRate.filter((m) => walking.has(m.start_time - 300)).map((m) => m.avg));
    assert.ok(walkingBpm > sleepingBpm + 15, `walking ${walkingBpm}, asleep ${sleepingBpm}`);
  });

  it('runs again the same day and on later days without failing, keeping one night at a time', async () => {
    const first = (await sessionsOf((await database.stores.users.findByEmail(DEMO_USER_EMAIL))!.id)).length;
    await demo();
    const user = (await database.stores.users.findByEmail(DEMO_USER_EMAIL))!;
    assert.equal((await sessionsOf(user.id)).length, first, 'the same nights replaced theirs');
    const now = Math.floor(Date.now() / 1000);
    // Other days draw each date's night anew: the earlier nights that would overlap them go.
    for (const later of [now + 86_400, now + 3.5 * 86_400]) await storeDemoDays(database.stores, user, later, 0);
    const sessions = await sessionsOf(user.id);
    for (let i = 1; i < sessions.length; i++) assert.ok(sessions[i]!.start_time >= sessions[i - 1]!.end_time, 'no two nights overlap');
    assert.ok(sessions.length >= 89 && sessions.length <= 94, `${sessions.length} nights`);
  });

  it('counts none of its own checks as the demo app\'s traffic', async () => {
    await demo();
    await demo();
    await server.flushUsage();
    const [demoApp] = (await database.stores.apps.list()).filter((app) => app.name === 'Stride Demo App');
    const usage = await database.stores.usage.forApp(demoApp!.id, '2000-01-01', 0);
    const counted = [...usage.days.values()].flatMap((metrics) => [...metrics.entries()]).filter(([, count]) => count > 0);
    assert.deepEqual(counted, [], 'no token, introspection or API request of the app was made');
  });

  it('run again for a server at another address, after a walk-through required PAR and DPoP, prints a request that works', async () => {
    const moved = await serveDatabase(database);
    try {
      const [demoApp] = (await database.stores.apps.list()).filter((app) => app.name === 'Stride Demo App');
      const narrowed = await runCliInProcess(['apps', 'update', demoApp!.clientId, '--require-par', 'yes', '--require-dpop', '--scopes', 'read_profile'], { DATABASE_URL: database.url });
      assert.equal(narrowed.code, 0, narrowed.stderr);
      const run = await runCliInProcess(['demo', '--json'], { DATABASE_URL: database.url, PUBLIC_URL: moved.url });
      assert.equal(run.code, 0, run.stderr);
      const printed = JSON.parse(run.stdout) as { app: { client_id: string; redirect_uri: string }; authorization_url: string };
      assert.equal(printed.app.redirect_uri, `${moved.url}/demo/callback`);
      const answer = await fetch(printed.authorization_url, { redirect: 'manual' });
      assert.equal(answer.status, 302, 'to the sign-in page, not an error page');
      assert.match(answer.headers.get('location') ?? '', /^\/login\?/);
      const app = (await database.stores.apps.findByClientId(printed.app.client_id))!;
      assert.deepEqual(app.redirectUris, [`${moved.url}/demo/callback`, `${server.url}/demo/callback`], 'the earlier server\'s callback still works');
      // Back on the first address: its callback first again, not a second copy.
      const back = await runCliInProcess(['demo', '--json'], { DATABASE_URL: database.url, PUBLIC_URL: server.url });
      assert.equal(back.code, 0, back.stderr);
      assert.deepEqual((await database.stores.apps.findByClientId(printed.app.client_id))!.redirectUris, [`${server.url}/demo/callback`, `${moved.url}/demo/callback`]);
      assert.equal(app.requirePar, false);
      assert.equal(app.requireDpop, false, 'the printed curl exchanges the code without a proof');
      assert.equal(app.scopes.length, 10, 'the printed URL asks for every scope');
    } finally {
      await moved.close();
    }
  });
});
