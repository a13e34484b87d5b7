/**
 * docs/migrating-from-fitbit.md, "A whole python-fitbit program": Debian's python-fitbit,
 * unmodified, run as the page writes it against Stride listening on 127.0.0.1, on SQLite and
 * PostgreSQL. The test plays the person (sign-in and consent at the URL the program prints, the
 * address the browser was sent to pasted back), and every value the program read equals what
 * `/v1/…` answers for the same person and day. Then the access token expires (the server's clock
 * moves past ACCESS_TOKEN_TTL) and python-fitbit refreshes it on its own.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { DateTime } from 'luxon';
import { registerApp } from '../../src/domain/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { missing } from '../support/dependencies.js';
import { blockAfter } from '../support/markdown.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { bearer, issueAccessToken } from '../support/tokens.js';
import { authorizeAndAllow, Browser, createFixture, signIn, type Fixture } from '../oauth/flow.js';
import { listeningStride } from '../oauth/listening.js';
import { writeLife } from '../api/fitbit/support-person.js';

cheapPasswordHashing();

const PYTHON = '/usr/bin/python3';
const PROGRAM = blockAfter(readFileSync('docs/migrating-from-fitbit.md', 'utf8'), '### A whole python-fitbit program', 'python').code;
const ZONE = 'Europe/Berlin';

function pythonFitbitUnavailable(): string | null {
  if (existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import fitbit']).status === 0) return null;
  return missing(`${PYTHON} with python-fitbit not found: install it with "apt-get install -y python3-fitbit"; skipping the python-fitbit program of docs/migrating-from-fitbit.md`);
}

/** The JSON a line of the program's output ends with (after an input() prompt, if any). */
const jsonOf = (line: string) => JSON.parse(line.slice(line.indexOf('{')));

forEachDialect('the python-fitbit program of docs/migrating-from-fitbit.md', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let issuer: URL;
  const redirectUri = 'http://127.0.0.1:9/callback';

  before(async () => {
    ({ t, issuer } = await listeningStride(dialect));
    f = await createFixture(t);
    await writeLife(t, f.user.id, 'office_worker', 3);
  });
  after(() => t.close());

  it('connects, reads every kind as /v1 answers it, and refreshes on its own once the token has expired', { skip: pythonFitbitUnavailable() ?? false }, async () => {
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Fitbit Python Program',
      redirectUris: [redirectUri],
      scopes: ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body'],
      isPublic: false,
    });
    const day = DateTime.fromSeconds(t.clock(), { zone: ZONE }).minus({ days: 1 }).toISODate()!;
    const child = spawn(PYTHON, ['-c', PROGRAM], {
      env: { PATH: process.env.PATH ?? '', OAUTHLIB_INSECURE_TRANSPORT: '1', STRIDE_URL: issuer.origin, CLIENT_ID: registered.app.clientId, CLIENT_SECRET: registered.clientSecret!, REDIRECT_URI: redirectUri, DAY: day },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      const parts = stdout.split('\n');
      stdout = parts.pop()!;
      lines.push(...parts);
      waiters.splice(0).forEach((wake) => wake());
    });
    const nextLine = async (): Promise<string> => {
      while (lines.length === 0) {
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), exited.then(() => Promise.reject(new Error(`the program ended: ${lines.join('\n')}${stdout}\n${stderr}`)))]);
      }
      return lines.shift()!;
    };

    const url = new URL(/^Open (\S+)$/.exec(await nextLine())![1]!);
    const browser = new Browser(null, issuer.origin);
    const toLogin = await browser.get(url.pathname + url.search);
    const signedIn = await signIn(browser, f.user.email, f.password, toLogin.location().searchParams.get('return_to')!);
    const back = await authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
    child.stdin.write(`${back}\n`);

    const read = jsonOf(await nextLine());
    // What /v1 answers to a token with the same reading scopes.
    const { token: v1 } = await issueAccessToken(t, { id: f.user.id, email: f.user.email }, ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'read_body']);
    const v1Json = async (path: string) => (await t.app.inject({ url: path, headers: bearer(v1) })).json();

    assert.equal(read.user_id, f.user.id);
    assert.equal(read.profile.user.encodedId, f.user.id);
    assert.equal(read.profile.user.timezone, ZONE);
    const first = DateTime.fromISO(day, { zone: ZONE }).minus({ days: 6 });
    const from = first.toSeconds();
    const to = DateTime.fromISO(day, { zone: ZONE }).plus({ days: 1 }).toSeconds();
    for (const metric of ['steps', 'distance', 'calories'] as const) {
      const v1Series = (await v1Json(`/v1/users/me/activities/${metric}/?granularity=day&start_time=${from}&end_time=${to}`))[metric] as Array<{ value: number }>;
      const values = (read.series[metric][`activities-${metric}`] as Array<{ value: string }>).map((entry) => (metric === 'distance' ? Math.round(Number(entry.value) * 1000) : Number(entry.value)));
      assert.deepEqual(values, v1Series.map((bucket) => bucket.value), metric);
    }
    assert.deepEqual(read.steps_range, read.series.steps);
    const heartDays = (await v1Json(`/v1/users/me/heartrate/?granularity=day&start_time=${from}&end_time=${to}`)).heartrate as Array<{ resting: number | null }>;
    assert.deepEqual(read.series.heart['activities-heart'].map((entry: { value: { restingHeartRate?: number } }) => entry.value.restingHeartRate ?? null), heartDays.map((bucket) => bucket.resting));

    const dayFrom = DateTime.fromISO(day, { zone: ZONE }).toSeconds();
    const stepMinutes = (await v1Json(`/v1/users/me/activities/steps/?granularity=minute&start_time=${dayFrom}&end_time=${to}`)).steps as Array<{ start_time: number; value: number }>;
    assert.deepEqual(read.steps_by_minute['activities-steps-intraday'].dataset.map((entry: { value: number }) => entry.value), stepMinutes.map((bucket) => bucket.value));
    const quarterSums = new Map<string, number>();
    for (const bucket of stepMinutes) {
      const local = DateTime.fromSeconds(bucket.start_time, { zone: ZONE });
      if (local.hour < 8 || local.hour > 9) continue;
      const key = `${local.toFormat('HH')}:${String(Math.floor(local.minute / 15) * 15).padStart(2, '0')}:00`;
      quarterSums.set(key, (quarterSums.get(key) ?? 0) + bucket.value);
    }
    assert.deepEqual(read.steps_by_quarter['activities-steps-intraday'].dataset, [...quarterSums].map(([time, value]) => ({ time, value })));
    const heartMinutes = (await v1Json(`/v1/users/me/heartrate/?granularity=minute&start_time=${dayFrom}&end_time=${to}`)).heartrate as Array<{ avg: number | null }>;
    assert.deepEqual(read.heart_by_minute['activities-heart-intraday'].dataset.map((entry: { value: number }) => entry.value), heartMinutes.filter((m) => m.avg !== null).map((m) => m.avg));
    assert.equal(read.heart_by_quarter['activities-heart-intraday'].datasetInterval, 15);
    assert.ok(read.heart_by_quarter['activities-heart-intraday'].dataset.length > 0);

    const nights = (await v1Json(`/v1/users/me/sleep/?start_date=${day}&end_date=${day}`)).sleep as Array<{ id: string; minutes_asleep: number }>;
    assert.equal(nights.length, 1);
    assert.deepEqual(read.sleep.sleep.map((log: { logId: string; minutesAsleep: number }) => [log.logId, log.minutesAsleep]), nights.map((night) => [night.id, night.minutes_asleep]));
    assert.deepEqual(read.sleep_stages.sleep.map((log: { logId: string; type: string }) => [log.logId, log.type]), nights.map((night) => [night.id, 'stages']));
    const weights = (await v1Json(`/v1/users/me/body/weight/?start_date=${first.toISODate()}&end_date=${day}`)).weight as Array<{ id: string; kg: number }>;
    assert.ok(weights.length > 0);
    assert.deepEqual(read.weight.weight.map((log: { logId: string; weight: number }) => [log.logId, log.weight]), weights.map((weight) => [weight.id, weight.kg]));

    // The access token expires; python-fitbit hears expired_token and refreshes.
    t.clock.advance(t.config.accessTokenTtl + 1);
    child.stdin.end('\n');
    const again = jsonOf(await nextLine());
    assert.equal(await exited, 0, stderr);
    assert.equal(again.profile.user.encodedId, f.user.id);
    assert.equal(again.refreshed, 1, 'refresh_cb was given the new tokens');
  });
});
