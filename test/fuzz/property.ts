/**
 * Runs a route group's generated requests against a Stride app and checks every answer
 * (invariants.ts). Seeded and repeatable:
 *   FUZZ_SEED=<n>      the seed (default: a random one, printed with every result and failure)
 *   FUZZ_PATH=<path>   with FUZZ_SEED, replays just the failing case fast-check printed
 *   FUZZ_RUNS=<n>      cases per property (default: each group's count sized for `npm test`)
 *   FUZZ_SECONDS=<n>   run each property for this long instead (`npm run fuzz` uses FUZZ_RUNS)
 *   FUZZ_STATS=1       print how often each route answered each status (how deep the cases reach)
 */
import assert from 'node:assert/strict';
import { basename } from 'node:path';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { createTestApp, type TestApp } from '../support/app.js';
import type { Dialect } from '../../src/db/database.js';
import { problemsWith, type Answer } from './invariants.js';
import { materialize, send, shorten, type Materialized, type RequestSpec } from './requests.js';
import { FuzzWorld } from './world.js';

function integerFromEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  assert.ok(Number.isSafeInteger(value), `${name} must be an integer, got "${text}"`);
  return value;
}

export const FUZZ_SEED = integerFromEnv('FUZZ_SEED') ?? (Math.random() * 2 ** 31) | 0;
const FUZZ_RUNS = integerFromEnv('FUZZ_RUNS');
const FUZZ_SECONDS = integerFromEnv('FUZZ_SECONDS');
const FUZZ_PATH = process.env.FUZZ_PATH || undefined;
const FUZZ_STATS = Boolean(process.env.FUZZ_STATS);

export interface FuzzTarget {
  t: TestApp;
  world: FuzzWorld;
}

/**
 * A Stride app with the rate limits on (low enough for 429 to happen from a hot address, high
 * enough that most cases, from many addresses, reach the route) and the real credentials.
 */
export async function createFuzzTarget(dialect: Dialect, env: Record<string, string> = {}): Promise<FuzzTarget> {
  const t = await createTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '30/min', RATE_LIMIT_TOKEN: '300/min', RATE_LIMIT_API: '500/min', ...env });
  return { t, world: await FuzzWorld.create(t) };
}

function summary(request: Materialized, answer: Answer | undefined): string {
  const sent = JSON.stringify(shorten({ ...request.options, payload: request.options.payload?.toString() }));
  const got = answer ? JSON.stringify(shorten({ status: answer.statusCode, headers: answer.headers, body: answer.body })) : '(no answer)';
  return `sent: ${sent}\nanswered: ${got}`;
}

/**
 * Checks every answer to `requests` (`defaultRuns` cases unless FUZZ_RUNS or FUZZ_SECONDS say
 * otherwise), after the answers to `examples`, which are sent every time.
 */
export async function fuzz(context: TestContext, target: FuzzTarget, requests: fc.Arbitrary<RequestSpec>, defaultRuns: number, examples: RequestSpec[] = []): Promise<void> {
  const { t, world } = target;
  const registeredRedirectUris = async () => {
    const rows = await t.database.db.kysely.selectFrom('apps').select('redirect_uris').execute();
    return rows.flatMap((row) => JSON.parse(row.redirect_uris) as string[]);
  };
  const statistics = new Map<string, number>();
  const property = fc.asyncProperty(requests, async (spec) => {
    const request = materialize(spec, world);
    let answer: Answer | undefined;
    try {
      answer = await send(t.app, request);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${summary(request, answer)}`);
    }
    // A request that may have spent a credential (signed out, rotated, revoked, exchanged, deleted)
    // is followed by fresh ones, so later cases still get past authentication.
    if (request.usedRealCredentials && spec.method !== 'GET' && spec.method !== 'HEAD' && answer.statusCode < 400) await world.renew();
    if (FUZZ_STATS) {
      const key = `${spec.method} ${spec.servedBy[0]?.path ?? '(no route)'} → ${answer.statusCode}`;
      statistics.set(key, (statistics.get(key) ?? 0) + 1);
    }
    const problems = await problemsWith(spec, request, answer, registeredRedirectUris);
    if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${summary(request, answer)}`);
  });
  const details = await fc.check(property, {
    seed: FUZZ_SEED,
    examples: examples.map((spec) => [spec]),
    ...(FUZZ_PATH !== undefined && { path: FUZZ_PATH }),
    // fast-check counts the examples among the runs.
    numRuns: examples.length + (FUZZ_RUNS ?? (FUZZ_SECONDS !== undefined ? Number.MAX_SAFE_INTEGER : defaultRuns)),
    ...(FUZZ_SECONDS !== undefined && { interruptAfterTimeLimit: FUZZ_SECONDS * 1000 }),
  });
  context.diagnostic(`${details.numRuns} cases, FUZZ_SEED=${details.seed}`);
  for (const [key, count] of [...statistics].sort()) context.diagnostic(`${String(count).padStart(6)} ${key}`);
  if (details.failed) {
    // Each test file runs in its own process: argv[1] names it.
    const file = `fuzz/${basename(process.argv[1] ?? '', '.js')}`;
    const replay = `FUZZ_SEED=${details.seed} FUZZ_PATH="${details.counterexamplePath}" node scripts/test.mjs ${file}`;
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    assert.fail(`fuzzing found a failing case; replay it with ${replay}\n${error}\n\n${fc.defaultReportMessage(details)}`);
  }
  await assertStillServing(target);
}

/** After the storm: the process answers /healthz, and a real token still reads the profile. */
export async function assertStillServing({ t, world }: FuzzTarget): Promise<void> {
  const health = await t.app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 200, health.body);
  assert.deepEqual(health.json(), { status: 'ok' });
  await world.renew();
  const profile = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { authorization: `Bearer ${world.get('accessToken')}` } });
  assert.equal(profile.statusCode, 200, profile.body);
}
