/**
 * `npm run bench` (issue 6): Stride against the physical limit (a bare node:http server) and a
 * peer (oidc-provider), side by side in one run on one machine. Each server is its own process on
 * 127.0.0.1; every load is keep-alive, no pipelining, 32 connections, a warm-up then 10 s.
 *
 *   1. bearer GET of the profile          vs bare node:http and oidc-provider's userinfo
 *   2. a 30-day daily steps series        vs bare node:http
 *   3. refresh-token chains with rotation vs oidc-provider doing the same
 *   4. complete authorization-code flows  vs the machine's Argon2id rate (ARGON2_OPTIONS)
 *   5. with DATABASE_URL=postgres://…, loads 1–3 again on PostgreSQL
 *   1–3 also on a second SQLite Stride with METRICS_TOKEN set (requests and store calls timed for
 *      /metrics), against the rates without metrics
 *   6. step uploads (a day of minutes each) vs the same upserts with nothing in front, and with
 *      five apps subscribed to the user's steps; then webhook deliveries per second (webhook-loads.ts)
 *   7. size: bytes per person-day of every kind of data, and of the events the uploads leave in a
 *      reading app's feed, 5 made-up people with a wearable × 30 days uploaded through the API to a
 *      fresh database (size-load.ts)
 *   8. a 30-day daily heart-rate series         vs bare node:http
 *   9. a day of minute heart rate               vs bare node:http answering a body of the same bytes
 *  10. the daily summary of 30 days, every scope vs bare node:http
 *  11. DPoP-bound GET of the profile      vs the ES256 proof-verification bound (in this process)
 *                                          and oidc-provider's userinfo with a DPoP-bound token
 *  12. DPoP-bound refresh chains, a public client, vs oidc-provider doing the same
 *  13. 10,000 devices polling their pending device codes at their interval (RFC 8628): the
 *      server's CPU time over the run, as a share of one core (lib/device-polls.ts)
 *   With DATABASE_URL=postgres://…, load 5 also takes loads 7–13 on PostgreSQL (rows 5/7 … 5/13).
 *  14. the profile GET through @stride/client vs the same GET with undici directly
 *      (client-load.ts; only when BENCH_LOADS names it)
 *  16. the Fitbit-compatible daily steps of 30 days vs the native route answering the same data (row 2's)
 *  17. the Fitbit-compatible day of heart rate by minute vs the native route (row 9's)
 *   With DATABASE_URL=postgres://…, load 5 also takes loads 16 and 17 on PostgreSQL.
 *  15. a change of the stride length by people with steps on 20,160 days: the answer's time and
 *      /healthz's while the distance of every day is recomputed (stride-change.ts); on PostgreSQL
 *      too (5/15) with load 5
 *  18. the import of a Google Takeout archive of a year (heart rate every 5 s, minute activity for
 *      the waking hours, nightly sleep, weekly weighings): heart-rate readings imported per second
 *      (takeout-import.ts); on PostgreSQL too (5/18) with load 5
 *  19. a Takeout archive of three years read and imported by a running server's own runner: the
 *      server's peak RSS, and the p99 of another person's GET /v1/users/me meanwhile
 *      (takeout-server.ts); on PostgreSQL too (5/19) with load 5
 *  20. the bytes a year takes imported from its archive against the same year uploaded through
 *      the API (takeout-size.ts); on PostgreSQL too (5/20) with load 5
 *
 * Every request of loads 11 and 12 carries a new DPoP proof (new jti and iat; its ath at the
 * resource). The proofs are signed before each slice, outside its time and outside the CPU counted
 * for the load driver (Workload.prepareSlice, lib/dpop-proofs.ts: one ES256 signature over a
 * header encoded once per key), about half again as many as the previous slices' rate needs (load
 * 12's first slice: its warm-up's); the slice only takes them off a list, and a row's note says how
 * many had to be signed during it.
 *
 * The bench user of loads 1–3 and 8–10 has 30 days of minute steps (imported with the CLI) and the
 * same 30 days of a made-up person's calories, heart rate, sleep and weight (uploaded through the
 * API, lib/person-upload.ts).
 *
 * Every server of a load is measured in interleaved slices with its references (lib/loads.ts), so
 * that a ratio is not moved by what the machine was doing during one server's turn. Stride on
 * PostgreSQL (load 5) runs in the same rotations as Stride on SQLite, against the same slices of
 * the references.
 *
 * Run it through `npm run bench`, which sizes libuv's thread pool as `stride` does (one thread per
 * core, src/thread-pool.cts) for the hashing bound of load 4.
 *
 * Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2), BENCH_LOADS (e.g.
 * "1,3"), BENCH_CPU_PROF=DIR (run Stride under --cpu-prof, profiles written to DIR).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ARGON2_OPTIONS } from '../src/security/passwords.js';
import { plainMechanisms } from '../src/speed-switches.js';
import {
  authorizationFlowWorkload,
  fixedRequestWorkload,
  hashingWorkload,
  interleave,
  proofVerificationWorkload,
  refreshChainWorkload,
  type LoadSettings,
  type Measurement,
} from './lib/loads.js';
import { installCleanup, stopAll, stopServer, type ServerProcess } from './lib/processes.js';
import {
  formatChecks,
  formatCpuTable,
  formatTable,
  machine,
  noErrorsCheck,
  p99Check,
  ratioCheck,
  rssCheck,
  writeResults,
  type Check,
  type Row,
} from './lib/report.js';
import {
  ALL_SCOPES,
  prepareStride,
  STRIDE_ENDPOINTS,
  startBare,
  startPeer,
  startStride,
  strideTokens,
  peerTokens,
  type PeerSetup,
  type StrideSetup,
} from './lib/servers.js';
import { obtainTokens } from './lib/oauth-client.js';
import { accessTokenHash, newProofKey, ProofPool } from './lib/dpop-proofs.js';
import { devicePollWorkload, POLL_MARGIN_SECONDS, startDeviceRequests } from './lib/device-polls.js';
import { OFFICE_WORKER, synthesizePerson } from '../src/domain/synthetic-person.js';
import { connection, send } from './lib/browser.js';
import { uploadPerson, WRITE_SCOPES } from './lib/person-upload.js';
import { temporaryPostgresDatabase } from './lib/postgres.js';
import { strideChangeLoad } from './stride-change.js';
import { removeTakeoutArchive, takeoutImportLoad } from './takeout-import.js';
import { removeThreeYearArchive, takeoutServerLoad, YEARS } from './takeout-server.js';
import { takeoutSizeLoad, type TakeoutSizeResult } from './takeout-size.js';
import { DATA_TABLES, EVENT_TABLES, measureSize, type SizeResult } from './size-load.js';
import { webhookLoads } from './webhook-loads.js';
import { clientLoad } from './client-load.js';

const CONNECTIONS = 32;

function seconds(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 120) throw new Error(`${name} must be a number of seconds from 0 to 120`);
  return value;
}

const settings: LoadSettings = {
  connections: CONNECTIONS,
  warmupSeconds: seconds('BENCH_WARMUP', 2),
  durationSeconds: seconds('BENCH_DURATION', 10),
};
const selected = new Set((process.env.BENCH_LOADS ?? '1,2,3,4,5,6,7,8,9,10,11,12,13,15,16,17,18,19,20').split(',').map((s) => s.trim()));
const cpuProfDir = process.env.BENCH_CPU_PROF;
const strideFlags = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
/** STRIDE_PLAIN reaches every Stride the bench starts (and its in-process benches): the mechanisms on their plain path. */
const plainRun = [...plainMechanisms(process.env.STRIDE_PLAIN)];
const postgresUrl = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL! : undefined;

const rows: Row[] = [];
const extras: Record<string, unknown> = {};
const cleanups: Array<() => Promise<void>> = [];

async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

function log(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

function row(load: string, server: string, unit: string, measurement: Measurement, ratios: Record<string, number> = {}, checks: Check[] = []): Row {
  const entry = { load, server, unit, measurement, ratios, checks };
  rows.push(entry);
  const m = measurement;
  log(`${load} · ${server}: ${m.rate.toFixed(1)} ${unit}, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms${m.note ? ` (${m.note})` : ''}`);
  return entry;
}

/** `rate` over the reference's, with the check that it is at least `minimum` (none: the ratio is only shown). */
function against(m: Measurement, reference: Measurement, name: string, target: string, minimum: number | null) {
  const ratio = m.rate / reference.rate;
  return { name, ratio, check: minimum === null ? null : ratioCheck(target, ratio, minimum) };
}

function withRatios(m: Measurement, comparisons: Array<ReturnType<typeof against>>): { ratios: Record<string, number>; checks: Check[] } {
  return {
    ratios: Object.fromEntries(comparisons.map((c) => [c.name, c.ratio])),
    checks: [noErrorsCheck(m), ...comparisons.flatMap((c) => (c.check ? [c.check] : []))],
  };
}

/**
 * What the PostgreSQL rows are held to where it differs from SQLite: the database server shares the
 * machine's two cores with Stride, so the profile read is held to oidc-provider alone (≥ 4×, its
 * ratio to the bare server shown) and refresh chains to ≥ 1.5× oidc-provider; p99 ≤ 20 ms as on
 * SQLite.
 */
const POSTGRES_TARGETS = { profileVsBare: null, refreshVsPeer: 1.5 } as const;
const SQLITE_TARGETS = { profileVsBare: 0.5, refreshVsPeer: 2 } as const;
const targetsOf = (s: StrideRun) => (s.prefix === '5/' ? POSTGRES_TARGETS : SQLITE_TARGETS);

/**
 * A Stride's comparisons. One serving /metrics is held to one target, within 10 % of the same
 * without metrics in the same slices; its other ratios are shown, and judged on the default one.
 */
function strideRatios(s: StrideRun, m: Measurement, comparisons: Array<ReturnType<typeof against>>, strides: StrideRun[], measurements: Measurement[]) {
  const reference = s.withoutMetrics && measurements[strides.indexOf(s.withoutMetrics)];
  if (!reference) return withRatios(m, comparisons);
  const cost = against(m, reference, 'without metrics', 'vs the same without metrics', 0.9);
  const { ratios } = withRatios(m, [...comparisons, cost]);
  return { ratios, checks: [noErrorsCheck(m), cost.check!] };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** One Stride under test (SQLite, or PostgreSQL for load 5), with what its loads need. */
interface StrideRun {
  label: string;
  /** '' on SQLite, '5/' on PostgreSQL: the prefix of its rows' load names. */
  prefix: string;
  /** Which of loads 1–3 it takes part in. */
  loads: Set<string>;
  server: ServerProcess;
  setup: StrideSetup;
  profileToken: string;
  stepsToken: string;
  heartRateToken: string;
  /** Every scope: the daily summary shows every field. */
  summaryToken: string;
  /** Counts rotated refresh tokens in the database, from another connection than the server's. */
  countRotations: () => Promise<number>;
  /** Serving /metrics: its rates are compared with this run's, the same without metrics. */
  withoutMetrics?: StrideRun;
}

async function startStrideRun(
  label: string,
  prefix: string,
  loads: Set<string>,
  databaseUrl: string,
  workDir: string,
  countRotations: () => Promise<number>,
  env: Record<string, string> = {},
): Promise<StrideRun> {
  log(`preparing ${label} (accounts, app, 30 days of minute steps)…`);
  const setup = await prepareStride(databaseUrl, workDir);
  const server = await startStride(setup.databaseUrl, label, { nodeFlags: strideFlags, env });
  const endpoints = STRIDE_ENDPOINTS(server.origin);
  const token = async (scope: string) => (await obtainTokens(server.origin, endpoints, setup.client, setup.user, { scope }, 1))[0]!.access_token;
  if (['8', '9', '10', '17'].some((load) => loads.has(load))) {
    log(`${label}: uploading the same 30 days of calories, heart rate, sleep and weight through the API…`);
    // A made-up person living on UTC days, so that the steps window holds 30 whole days of it.
    const person = synthesizePerson({ ...OFFICE_WORKER, timezone: 'UTC' }, setup.steps.end - 1, 30, 7);
    await uploadPerson(server.origin, await token(WRITE_SCOPES), person, { withoutSteps: true });
  }
  // Tokens as an app would hold them: one per kind of data read (the grant keeps them all).
  return {
    label,
    prefix,
    loads,
    server,
    setup,
    profileToken: await token('read_profile'),
    stepsToken: await token('read_activity'),
    heartRateToken: await token('read_heartrate'),
    summaryToken: await token(ALL_SCOPES),
    countRotations,
  };
}

async function sqliteStride(loads: Set<string>, label = 'Stride SQLite', env: Record<string, string> = {}): Promise<StrideRun> {
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  const file = join(workDir, 'stride.sqlite');
  const countRotations = async () => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM refresh_tokens WHERE rotated_at IS NOT NULL').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  return startStrideRun(label, '', loads, `sqlite:${file}`, workDir, countRotations, env);
}

/** Stride on a temporary database of the PostgreSQL server at DATABASE_URL, dropped afterwards. */
async function postgresStride(loads: Set<string>): Promise<StrideRun> {
  const database = await temporaryPostgresDatabase(postgresUrl!, 'loads');
  cleanups.push(async () => {
    await stopAll();
    await database.drop();
  });
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-pg-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  const countRotations = async () => Number((await database.reader.query('SELECT count(*) AS n FROM refresh_tokens WHERE rotated_at IS NOT NULL')).rows[0].n);
  return startStrideRun('Stride PostgreSQL', '5/', loads, database.url, workDir, countRotations);
}

/** Load 1: the profile GET of every Stride, with the bare server's and the peer's userinfo slices. */
async function profileLoad(strides: StrideRun[], bare: ServerProcess, peer: PeerSetup): Promise<void> {
  const [peerToken] = await peerTokens(peer, 'openid profile', 1);
  const [bareM, peerM, ...strideMs] = await interleave(
    [
      fixedRequestWorkload(`${bare.origin}/`, {}, CONNECTIONS, bare.pid),
      fixedRequestWorkload(peer.endpoints.userinfo, bearer(peerToken!.access_token), CONNECTIONS, peer.server.pid),
      ...strides.map((s) => fixedRequestWorkload(`${s.server.origin}/v1/users/me`, bearer(s.profileToken), CONNECTIONS, s.server.pid)),
    ],
    settings,
  );
  row('1 profile GET', 'bare node:http', 'req/s', bareM!);
  row('1 profile GET', 'oidc-provider userinfo', 'req/s', peerM!, {}, [noErrorsCheck(peerM!)]);
  strides.forEach((s, i) => {
    const m = strideMs[i]!;
    const { ratios, checks } = strideRatios(
      s,
      m,
      [against(m, bareM!, 'bare', 'vs bare node:http', targetsOf(s).profileVsBare), against(m, peerM!, 'oidc-provider', 'vs oidc-provider userinfo', 4)],
      strides,
      strideMs,
    );
    row(`${s.prefix}1 profile GET`, s.label, 'req/s', m, ratios, [...checks, p99Check(m), rssCheck(m)]);
  });
}

/** A GET of a Stride's: its path and query, and the token it is sent with. */
interface StrideRead {
  path: (s: StrideRun) => string;
  token: (s: StrideRun) => string;
}

/** Whole UTC dates of [start, end) seconds, for the routes that take dates. */
const isoDate = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

const READS = {
  steps30: {
    path: (s) => `/v1/users/me/activities/steps?start_time=${s.setup.steps.start}&end_time=${s.setup.steps.end}&granularity=day`,
    token: (s) => s.stepsToken,
  },
  heartRate30: {
    path: (s) => `/v1/users/me/heartrate?start_time=${s.setup.steps.start}&end_time=${s.setup.steps.end}&granularity=day`,
    token: (s) => s.heartRateToken,
  },
  heartRateMinutes: {
    path: (s) => `/v1/users/me/heartrate?start_time=${s.setup.steps.end - 86_400}&end_time=${s.setup.steps.end}&granularity=minute`,
    token: (s) => s.heartRateToken,
  },
  summary30: {
    path: (s) => `/v1/users/me/summary/daily/?start_date=${isoDate(s.setup.steps.start)}&end_date=${isoDate(s.setup.steps.end - 1)}&timezone=UTC`,
    token: (s) => s.summaryToken,
  },
  /** The Fitbit-compatible face answering the same data as steps30 and heartRateMinutes (loads 16, 17). */
  fitbitSteps30: {
    path: (s) => `/1/user/-/activities/steps/date/${isoDate(s.setup.steps.end - 1)}/30d.json`,
    token: (s) => s.stepsToken,
  },
  fitbitHeartRateMinutes: {
    path: (s) => `/1/user/-/activities/heart/date/${isoDate(s.setup.steps.end - 86_400)}/1d/1min.json`,
    token: (s) => s.heartRateToken,
  },
} satisfies Record<string, StrideRead>;

/**
 * Loads 16 and 17: the Fitbit-compatible route against the native route answering the same data,
 * on the same Stride, in interleaved slices; at least `minimum` × the native rate.
 */
async function compatibleLoad(load: string, strides: StrideRun[], native: StrideRead, compatible: StrideRead, minimum: number): Promise<void> {
  for (const s of strides) {
    const answer = await readOnce(s, compatible);
    if (answer.status !== 200) throw new Error(`${s.prefix}${load}: GET ${compatible.path(s)} answers ${answer.status} ${answer.body.slice(0, 200)}`);
    const [nativeM, compatibleM] = await interleave(
      [
        fixedRequestWorkload(`${s.server.origin}${native.path(s)}`, bearer(native.token(s)), CONNECTIONS, s.server.pid),
        fixedRequestWorkload(`${s.server.origin}${compatible.path(s)}`, bearer(compatible.token(s)), CONNECTIONS, s.server.pid),
      ],
      settings,
    );
    row(`${s.prefix}${load}`, `${s.label}, native route`, 'req/s', nativeM!, {}, [noErrorsCheck(nativeM!)]);
    const { ratios, checks } = withRatios(compatibleM!, [against(compatibleM!, nativeM!, 'native', 'vs the native route answering the same data', minimum)]);
    row(`${s.prefix}${load}`, `${s.label}, Fitbit-compatible`, 'req/s', compatibleM!, ratios, [...checks, rssCheck(compatibleM!)]);
  }
}

/** One answer of `read` from `s` (status and body), before a load, to check it answers and to size it. */
async function readOnce(s: StrideRun, read: StrideRead): Promise<{ status: number; body: string }> {
  const client = connection(s.server.origin);
  try {
    return await send(client, read.path(s), { headers: bearer(read.token(s)) });
  } finally {
    await client.destroy();
  }
}

/**
 * A fixed GET of every Stride against the bare server's slices, at least `minimum` × bare (and, with
 * `withP99`, p99 ≤ 20 ms: a target of loads 1–3 only; the others show theirs). A Stride
 * whose first answer is not 200 (a route that is not there) is left out of the slices, with a row
 * that says so.
 */
async function readLoad(load: string, strides: StrideRun[], bare: ServerProcess, read: StrideRead, minimum: number, bareName = 'bare node:http', withP99 = false): Promise<void> {
  const answering: StrideRun[] = [];
  for (const s of strides) {
    const answer = await readOnce(s, read);
    if (answer.status === 200) {
      answering.push(s);
      continue;
    }
    log(`${s.prefix}${load} · ${s.label}: not measured, GET ${read.path(s)} answers ${answer.status} ${answer.body.slice(0, 200)}`);
    const none: Measurement = { rate: 0, p50: NaN, p99: NaN, ok: 0, failed: 1, seconds: 0, rssMb: null, cpu: { serverLoopUs: null, serverThreadsUs: null, driverUs: NaN }, note: `GET answers ${answer.status}: ${answer.body.slice(0, 160)}` };
    rows.push({ load: `${s.prefix}${load}`, server: s.label, unit: 'req/s', measurement: none, ratios: {}, checks: [noErrorsCheck(none)] });
  }
  if (answering.length === 0) return;
  const [bareM, ...strideMs] = await interleave(
    [
      fixedRequestWorkload(`${bare.origin}/`, {}, CONNECTIONS, bare.pid),
      ...answering.map((s) => fixedRequestWorkload(`${s.server.origin}${read.path(s)}`, bearer(read.token(s)), CONNECTIONS, s.server.pid)),
    ],
    settings,
  );
  row(load, bareName, 'req/s', bareM!);
  answering.forEach((s, i) => {
    const m = strideMs[i]!;
    const { ratios, checks } = strideRatios(s, m, [against(m, bareM!, 'bare', `vs ${bareName}`, minimum)], answering, strideMs);
    row(`${s.prefix}${load}`, s.label, 'req/s', m, ratios, [...checks, ...(withP99 ? [p99Check(m)] : []), rssCheck(m)]);
  });
}

/**
 * Load 9: a day of minute heart rate (about 130 KB of JSON) against a bare server answering the
 * same bytes: the first Stride's answer, written to a file the bare server sends.
 */
async function minuteHeartRateLoad(strides: StrideRun[]): Promise<void> {
  const answer = await readOnce(strides[0]!, READS.heartRateMinutes);
  if (answer.status !== 200) return readLoad('9 heart rate 1 day by minute', strides, await startBare(), READS.heartRateMinutes, 0.3);
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-body-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  const file = join(workDir, 'heartrate-minutes.json');
  await writeFile(file, answer.body);
  const bytes = Buffer.byteLength(answer.body);
  extras.heart_rate_minutes_body_bytes = bytes;
  log(`load 9: a day of minute heart rate is ${bytes} bytes; the bare server answers the same bytes`);
  const bare = await startBare(file);
  try {
    await readLoad('9 heart rate 1 day by minute', strides, bare, READS.heartRateMinutes, 0.3, `bare node:http (${bytes} B body)`);
  } finally {
    await stopServer(bare);
  }
}

/** Load 3: refresh chains on every Stride and on the peer; every rotation must be in the database. */

/** Every rotation answered (warm-up included) is a rotated row in the database: none lost, none invented. */
async function rotationsCommitted(s: { countRotations(): Promise<number> }, before: number, m: Measurement): Promise<Check> {
  const rotated = (await s.countRotations()) - before;
  const rotations = m.ok + (m.warmupOk ?? 0);
  return {
    target: 'every rotation committed to the database',
    pass: rotated === rotations && rotations > 0,
    actual: `${rotated} rotated rows for ${rotations} answered rotations`,
  };
}
async function refreshLoad(strides: StrideRun[], peer: PeerSetup): Promise<void> {
  const before = await Promise.all(strides.map((s) => s.countRotations()));
  const [peerM, ...strideMs] = await interleave(
    [
      refreshChainWorkload(
        { tokenUrl: peer.endpoints.token, client: peer.client },
        async (count) => (await peerTokens(peer, 'read_profile', count)).map((t) => t.refresh_token!),
        CONNECTIONS,
        peer.server.pid,
      ),
      ...strides.map((s) =>
        refreshChainWorkload(
          { tokenUrl: STRIDE_ENDPOINTS(s.server.origin).token, client: s.setup.client },
          async (count) => (await strideTokens(s.server, s.setup, count)).map((t) => t.refresh_token!),
          CONNECTIONS,
          s.server.pid,
        ),
      ),
    ],
    settings,
  );
  row('3 refresh chains', 'oidc-provider', 'req/s', peerM!, {}, [noErrorsCheck(peerM!)]);
  for (const [i, s] of strides.entries()) {
    const m = strideMs[i]!;
    const committed = await rotationsCommitted(s, before[i]!, m);
    const { ratios, checks } = strideRatios(s, m, [against(m, peerM!, 'oidc-provider', 'vs oidc-provider refresh', targetsOf(s).refreshVsPeer)], strides, strideMs);
    row(`${s.prefix}3 refresh chains`, s.label, 'req/s', m, ratios, [...checks, committed, p99Check(m), rssCheck(m)]);
  }
}

/** Load 11: the DPoP-bound profile GET of every Stride, with the verification bound's and the peer's slices. */
async function dpopProfileLoad(strides: StrideRun[], peer: PeerSetup): Promise<void> {
  const peerKey = newProofKey();
  const [peerToken] = await peerTokens(peer, 'openid', 1, peerKey);
  const peerProofs = new ProofPool(peerKey, { htm: 'GET', htu: peer.endpoints.userinfo, ath: accessTokenHash(peerToken!.access_token) });
  const strideWorkloads = [];
  for (const s of strides) {
    const key = newProofKey();
    const [token] = await obtainTokens(s.server.origin, STRIDE_ENDPOINTS(s.server.origin), s.setup.publicClient, s.setup.user, { scope: 'read_profile', dpopKey: key }, 1);
    const url = `${s.server.origin}/v1/users/me`;
    const proofs = new ProofPool(key, { htm: 'GET', htu: url, ath: accessTokenHash(token!.access_token) });
    strideWorkloads.push(fixedRequestWorkload(url, { authorization: `DPoP ${token!.access_token}` }, CONNECTIONS, s.server.pid, undefined, proofs));
  }
  const [boundM, peerM, ...strideMs] = await interleave(
    [
      proofVerificationWorkload(),
      fixedRequestWorkload(peer.endpoints.userinfo, { authorization: `DPoP ${peerToken!.access_token}` }, CONNECTIONS, peer.server.pid, undefined, peerProofs),
      ...strideWorkloads,
    ],
    settings,
  );
  row('11 proof-verification bound', 'ES256 verify, one core (this machine)', 'verify/s', boundM!);
  row('11 DPoP profile GET', 'oidc-provider userinfo', 'req/s', peerM!, {}, [noErrorsCheck(peerM!)]);
  strides.forEach((s, i) => {
    const m = strideMs[i]!;
    const { ratios, checks } = withRatios(m, [
      against(m, boundM!, 'verification bound', 'vs the proof-verification bound', 0.5),
      against(m, peerM!, 'oidc-provider', 'vs oidc-provider userinfo with DPoP', 2),
    ]);
    row(`${s.prefix}11 DPoP profile GET`, s.label, 'req/s', m, ratios, [...checks, p99Check(m), rssCheck(m)]);
  });
}

/** Load 12: DPoP-bound refresh chains of a public client, on every Stride and on the peer. */
async function dpopRefreshLoad(strides: StrideRun[], peer: PeerSetup): Promise<void> {
  const before = await Promise.all(strides.map((s) => s.countRotations()));
  const peerKey = newProofKey();
  const [peerM, ...strideMs] = await interleave(
    [
      refreshChainWorkload(
        { tokenUrl: peer.endpoints.token, client: peer.publicClient, proofs: new ProofPool(peerKey, { htm: 'POST', htu: peer.endpoints.token }) },
        async (count) => (await peerTokens(peer, 'read_profile', count, peerKey)).map((t) => t.refresh_token!),
        CONNECTIONS,
        peer.server.pid,
      ),
      ...strides.map((s) => {
        const key = newProofKey();
        const endpoints = STRIDE_ENDPOINTS(s.server.origin);
        return refreshChainWorkload(
          { tokenUrl: endpoints.token, client: s.setup.publicClient, proofs: new ProofPool(key, { htm: 'POST', htu: endpoints.token }) },
          async (count) => (await obtainTokens(s.server.origin, endpoints, s.setup.publicClient, s.setup.user, { scope: 'read_profile', dpopKey: key }, count)).map((t) => t.refresh_token!),
          CONNECTIONS,
          s.server.pid,
        );
      }),
    ],
    settings,
  );
  row('12 DPoP refresh chains', 'oidc-provider', 'req/s', peerM!, {}, [noErrorsCheck(peerM!)]);
  for (const [i, s] of strides.entries()) {
    const m = strideMs[i]!;
    const committed = await rotationsCommitted(s, before[i]!, m);
    const { ratios, checks } = withRatios(m, [against(m, peerM!, 'oidc-provider', 'vs oidc-provider DPoP refresh', 1.5)]);
    row(`${s.prefix}12 DPoP refresh chains`, s.label, 'req/s', m, ratios, [...checks, committed, p99Check(m), rssCheck(m)]);
  }
}

/** Load 13: how many devices wait at once, and the most of one core their polls may cost. */
const DEVICES = 10_000;
const DEVICE_CPU_SHARE = 0.1;
/** Connections the devices' polls share (as through a reverse proxy's kept-alive connections). */
const DEVICE_CONNECTIONS = 16;

/**
 * Load 13: each Stride's pending devices polling at their interval, its CPU time over the slices;
 * in the same rotation, the bare server answering the same polls (the cost of the HTTP alone).
 */
async function devicePollLoad(strides: StrideRun[], bare: ServerProcess): Promise<void> {
  const workloads = [];
  let interval = 5;
  let codes: string[] = [];
  for (const s of strides) {
    log(`${s.label}: ${DEVICES} device authorization requests…`);
    const target = { origin: s.server.origin, clientId: s.setup.publicClient.clientId };
    const started = await startDeviceRequests(target, DEVICES, CONNECTIONS);
    interval = started.interval;
    codes = started.deviceCodes;
    workloads.push(devicePollWorkload(target, started.deviceCodes, started.interval, DEVICE_CONNECTIONS, s.server.pid));
  }
  const bareTarget = { origin: bare.origin, clientId: strides[0]!.setup.publicClient.clientId };
  const anySuccess = (status: number) => (status >= 200 && status < 300 ? 'pending' : 'other');
  const [bareM, ...measurements] = await interleave([devicePollWorkload(bareTarget, codes, interval, DEVICE_CONNECTIONS, bare.pid, anySuccess), ...workloads], settings);
  const expected = DEVICES / (interval + POLL_MARGIN_SECONDS);
  const load = `13 ${DEVICES} devices polling`;
  const share = (m: Measurement) => {
    const us = (m.cpu.serverLoopUs ?? NaN) + (m.cpu.serverThreadsUs ?? NaN);
    return { us, share: (us * m.rate) / 1e6 };
  };
  const pace = (m: Measurement): Check => ({
    target: `${DEVICES} devices polled every ${interval} s (≥ 95 % of ${expected.toFixed(0)} polls/s)`,
    pass: m.rate >= 0.95 * expected,
    actual: `${m.rate.toFixed(0)} polls/s`,
  });
  const withShare = (m: Measurement) => ({ ...m, note: [m.note, `${(share(m).share * 100).toFixed(1)} % of one core`].filter(Boolean).join('; ') });
  row(load, 'bare node:http (same polls)', 'polls/s', withShare(bareM!), {}, [pace(bareM!)]);
  strides.forEach((s, i) => {
    const m = measurements[i]!;
    const cost = share(m);
    const checks: Check[] = [
      noErrorsCheck(m),
      pace(m),
      { target: `server CPU < ${DEVICE_CPU_SHARE * 100} % of one core`, pass: cost.share < DEVICE_CPU_SHARE, actual: `${(cost.share * 100).toFixed(1)} % (${cost.us.toFixed(0)} µs a poll)` },
    ];
    row(`${s.prefix}${load}`, s.label, 'polls/s', withShare(m), {}, [...checks, rssCheck(m)]);
  });
}

/** A flow takes about 0.4 s under load: two slices of 5 s each leave little idle tail. */
const FLOW_SLICE_SECONDS = 5;

/** Load 4: complete authorization-code flows on Stride SQLite, with the Argon2id bound's slices. */
async function flowLoad(stride: StrideRun): Promise<void> {
  const { server, setup } = stride;
  const [bound, m] = await interleave(
    [
      hashingWorkload({ ...ARGON2_OPTIONS }, CONNECTIONS),
      authorizationFlowWorkload(
        { origin: server.origin, endpoints: STRIDE_ENDPOINTS(server.origin), client: setup.client, credentials: setup.flowUser, scope: ALL_SCOPES },
        CONNECTIONS,
        server.pid,
      ),
    ],
    settings,
    FLOW_SLICE_SECONDS,
  );
  row('4 hashing bound', 'Argon2id verify (this machine)', 'hash/s', bound!);
  const { ratios, checks } = withRatios(m!, [against(m!, bound!, 'hashing bound', 'vs the hashing bound', 0.7)]);
  row('4 authorization-code flows', stride.label, 'flow/s', m!, ratios, [...checks, rssCheck(m!)]);
}

/** Uploaders at once: every upload waits for SQLite's one writer anyway, so more only queue. */
const UPLOAD_CONNECTIONS = 8;

/** Load 6 on a SQLite Stride of its own (webhook-loads.ts). */
async function uploadLoad(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-uploads-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  const result = await webhookLoads(`sqlite:${join(workDir, 'stride.sqlite')}`, settings, UPLOAD_CONNECTIONS, log, strideFlags);
  const inSamples = (m: Measurement): Measurement => ({ ...m, rate: m.rate * result.samplesPerUpload });
  const [limit, quiet, watched] = [inSamples(result.limit), inSamples(result.quiet), inSamples(result.watched)];
  row('6 uploads', 'SQLite upserts, nothing in front', 'samples/s', limit);
  const none = withRatios(quiet, [against(quiet, limit, 'limit', 'vs the same upserts with nothing in front', 0.5)]);
  row('6 uploads', 'Stride SQLite', 'samples/s', quiet, none.ratios, [...none.checks, rssCheck(quiet)]);
  const five = withRatios(watched, [against(watched, quiet, 'no subscribers', 'vs the same uploads with no subscribed app', 0.9)]);
  row('6 uploads, 5 subscribed apps', 'Stride SQLite', 'samples/s', watched, five.ratios, [...five.checks, rssCheck(watched)]);
  const { messages, seconds, rate } = result.deliveries;
  const delivered: Measurement = { rate, p50: NaN, p99: NaN, ok: messages, failed: 0, seconds, rssMb: null, cpu: { serverLoopUs: null, serverThreadsUs: null, driverUs: NaN } };
  row('6 webhook deliveries', 'Stride SQLite', 'msg/s', delivered, {}, [{ target: 'deliveries ≥ 1000 msg/s', pass: rate >= 1000, actual: `${rate.toFixed(0)} msg/s` }]);
}

/** Load 14 on a SQLite Stride of its own (client-load.ts). */
async function clientRow(): Promise<void> {
  const { direct, client } = await clientLoad(settings, log);
  row('14 profile GET', 'undici request, directly', 'req/s', direct);
  const { ratios, checks } = withRatios(client, [against(client, direct, 'undici', 'vs the same GET with undici directly', 0.8)]);
  row('14 profile GET', '@stride/client', 'req/s', client, ratios, checks);
}

/** Load 15 on a fresh database of its own (stride-change.ts). */
async function strideChangeRows(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const label = dialect === 'sqlite' ? 'Stride SQLite' : 'Stride PostgreSQL';
  let databaseUrl: string;
  if (dialect === 'sqlite') {
    const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-stride-'));
    cleanups.push(() => rm(workDir, { recursive: true, force: true }));
    databaseUrl = `sqlite:${join(workDir, 'stride.sqlite')}`;
  } else {
    const database = await temporaryPostgresDatabase(postgresUrl!, 'stride');
    cleanups.push(() => database.drop());
    databaseUrl = database.url;
  }
  log(`load 15: stride changes over a long history (${label})…`);
  const { answers, health } = await strideChangeLoad(databaseUrl, label, log);
  const prefix = dialect === 'sqlite' ? '' : '5/';
  row(`${prefix}15 stride change, 20,160 days`, label, 'ms (max)', answers, {}, [
    { target: 'every answer within 50 ms', pass: answers.rate <= 50, actual: `slowest ${answers.rate.toFixed(1)} ms` },
  ]);
  row(`${prefix}15 /healthz during it`, label, 'ms (max)', health, {}, [
    { target: '/healthz always under 100 ms', pass: health.rate < 100, actual: `slowest ${health.rate.toFixed(1)} ms, p99 ${health.p99.toFixed(1)} ms` },
  ]);
}

/** Heart-rate readings a second a Takeout import must reach (SQLite, PostgreSQL). */
const TAKEOUT_TARGETS = { sqlite: 150_000, postgres: 60_000 } as const;

/** Load 18 on a fresh database of its own (takeout-import.ts). */
async function takeoutImportRow(dialect: 'sqlite' | 'postgres'): Promise<void> {
  let databaseUrl: string;
  if (dialect === 'sqlite') {
    const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-takeout-db-'));
    cleanups.push(() => rm(workDir, { recursive: true, force: true }));
    databaseUrl = `sqlite:${join(workDir, 'stride.sqlite')}`;
  } else {
    const database = await temporaryPostgresDatabase(postgresUrl!, 'takeout');
    cleanups.push(() => database.drop());
    databaseUrl = database.url;
  }
  const label = dialect === 'sqlite' ? 'Stride SQLite' : 'Stride PostgreSQL';
  log(`load 18: the import of a year's Takeout archive (${label})…`);
  const result = await takeoutImportLoad(databaseUrl, log);
  extras[`takeout_import_${dialect}`] = { readings: result.readings, preview_seconds: result.previewSeconds, import_seconds: result.importSeconds, archive_bytes: result.archiveBytes };
  const target = TAKEOUT_TARGETS[dialect];
  row(`${dialect === 'sqlite' ? '' : '5/'}18 Takeout import of a year`, label, 'readings/s', result.import, {}, [
    { target: `≥ ${target.toLocaleString('en')} heart-rate readings a second`, pass: result.import.rate >= target, actual: `${Math.round(result.import.rate).toLocaleString('en')} readings/s` },
  ]);
}

/** A fresh database of the dialect for one load, dropped at the end of the run. */
async function freshDatabaseUrl(dialect: 'sqlite' | 'postgres', label: string): Promise<string> {
  if (dialect === 'sqlite') {
    const workDir = await mkdtemp(join(tmpdir(), `stride-bench-${label}-`));
    cleanups.push(() => rm(workDir, { recursive: true, force: true }));
    return `sqlite:${join(workDir, 'stride.sqlite')}`;
  }
  const database = await temporaryPostgresDatabase(postgresUrl!, label);
  cleanups.push(() => database.drop());
  return database.url;
}

/** The most a server may hold in memory importing an archive of three years, MB (issue 43). */
const TAKEOUT_RSS_MB = 300;
/** The most another person's profile read may take at p99 while an import runs, ms (issue 43). */
const TAKEOUT_OTHERS_P99_MS = 20;

/** Load 19 on a fresh database of its own (takeout-server.ts). */
async function takeoutServerRows(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const databaseUrl = await freshDatabaseUrl(dialect, 'takeout3y');
  const label = dialect === 'sqlite' ? 'Stride SQLite' : 'Stride PostgreSQL';
  log(`load 19: an archive of ${YEARS} years read and imported by the server (${label})…`);
  const result = await takeoutServerLoad(databaseUrl, label, log);
  extras[`takeout_server_${dialect}`] = { peak_rss_mb: result.peakRssMb, read_seconds: result.readSeconds, import_seconds: result.importSeconds, readings: result.readings, archive_bytes: result.archiveBytes };
  const prefix = dialect === 'sqlite' ? '' : '5/';
  const rss: Check = { target: `server peak RSS ≤ ${TAKEOUT_RSS_MB} MB (VmHWM)`, pass: result.peakRssMb <= TAKEOUT_RSS_MB, actual: `${result.peakRssMb.toFixed(0)} MB` };
  row(`${prefix}19 others' profile GET, no import`, label, 'req/s', result.quiet, {}, [noErrorsCheck(result.quiet)]);
  row(`${prefix}19 others' profile GET, archive read`, label, 'req/s', result.reading, {}, [noErrorsCheck(result.reading), p99Check(result.reading, TAKEOUT_OTHERS_P99_MS)]);
  row(`${prefix}19 others' profile GET, ${YEARS} years imported`, label, 'req/s', result.importing, {}, [noErrorsCheck(result.importing), p99Check(result.importing, TAKEOUT_OTHERS_P99_MS), rss]);
}

/** Load 20 (takeout-size.ts): imported bytes per person-day against uploaded ones. */
async function takeoutSizeRow(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const label = dialect === 'sqlite' ? 'Stride SQLite' : 'Stride PostgreSQL';
  const result = await takeoutSizeLoad(dialect, dialect === 'postgres' ? postgresUrl : undefined, log);
  extras[`takeout_size_${dialect}`] = result;
  const ratio = result.imported / result.uploaded;
  const parts = (of: Record<string, number>) => Object.entries(of).sort(([, a], [, b]) => b - a).slice(0, 4).map(([name, bytes]) => `${name} ${bytes.toFixed(0)}`).join(', ');
  const leftovers = (of: TakeoutSizeResult['importedLeftovers']) =>
    of.freeBytes !== undefined ? `free pages ${(of.freeBytes / 1024).toFixed(0)} KiB` : `series_days rows inserted ${of.seriesInserts}, updated ${of.seriesUpdates}, dead ${of.seriesDead}`;
  const measurement: Measurement = {
    rate: result.imported,
    p50: NaN,
    p99: NaN,
    ok: result.uploadRequests,
    failed: 0,
    seconds: result.importSeconds,
    rssMb: null,
    cpu: { serverLoopUs: null, serverThreadsUs: null, driverUs: NaN },
    note: `imported ${result.imported.toFixed(0)} B/person-day (${parts(result.importedParts)}; ${leftovers(result.importedLeftovers)}); uploaded through the API in ${result.uploadRequests} requests ${result.uploaded.toFixed(0)} (${parts(result.uploadedParts)}; ${leftovers(result.uploadedLeftovers)})`,
  };
  row(`${dialect === 'sqlite' ? '' : '5/'}20 size of an imported year`, label, 'B/person-day', measurement, { uploaded: ratio }, [
    { target: 'imported ≤ 1.05 × the same year uploaded through the API', pass: ratio <= 1.05, actual: `${ratio.toFixed(3)}× (${result.imported.toFixed(0)} vs ${result.uploaded.toFixed(0)} bytes)` },
  ]);
}

/** What a person-day may weigh, in bytes (issue 30: 4 KB on SQLite, 6 KB on PostgreSQL). */
const SIZE_TARGETS = { sqlite: 4 * 1024, postgres: 6 * 1024 } as const;
/** What the events of a person-day's uploads may weigh in an app's feed, on both (issue 45). */
const EVENTS_TARGET = 1024;

/** Load 7 on a fresh database of its own (size-load.ts): rows of bytes per person-day, the data's and the events'. */
async function sizeLoad(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-size-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  const result: SizeResult = await measureSize(workDir, dialect === 'postgres' ? postgresUrl : undefined, log);
  const target = SIZE_TARGETS[dialect];
  const what = dialect === 'sqlite' ? 'dbstat pages after wal_checkpoint(TRUNCATE)' : 'pg_total_relation_size';
  const listed = (parts: Record<string, number>) => Object.entries(parts).sort(([, a], [, b]) => b - a).map(([name, bytes]) => `${name} ${bytes.toFixed(0)}`).join(', ');
  const measured = (rate: number, note: string): Measurement => ({
    rate,
    p50: NaN,
    p99: NaN,
    ok: result.requests,
    failed: 0,
    seconds: result.uploadSeconds,
    rssMb: null,
    cpu: { serverLoopUs: null, serverThreadsUs: null, driverUs: NaN },
    note,
  });
  const uploads = `${result.personDays} person-days, ${result.records} records in ${result.requests} requests (${result.uploadSeconds.toFixed(1)} s)`;
  const file = result.fileBytesPerPersonDay === null ? '' : `; the file grew ${result.fileBytesPerPersonDay.toFixed(0)} B a person-day, every table`;
  extras[`size_${dialect}`] = result;
  const label = dialect === 'sqlite' ? 'Stride SQLite' : 'Stride PostgreSQL';
  const prefix = dialect === 'sqlite' ? '' : '5/';
  row(`${prefix}7 size, data`, label, 'B/person-day', measured(result.bytesPerPersonDay, `${uploads}; ${what} of ${DATA_TABLES.join(', ')}${file}; per person-day: ${listed(result.parts)}`), {}, [
    { target: `≤ ${target} bytes (${target / 1024} KB) per person-day, every kind of data`, pass: result.bytesPerPersonDay <= target, actual: `${result.bytesPerPersonDay.toFixed(0)} bytes` },
  ]);
  row(`${prefix}7 size, events`, label, 'B/person-day', measured(result.eventBytesPerPersonDay, `${result.eventsPerPersonDay.toFixed(1)} events (${result.eventRowsPerPersonDay.toFixed(1)} rows) a person-day in one reading app's feed; ${what} of ${EVENT_TABLES.join(', ')}; per person-day: ${listed(result.eventParts)}`), {}, [
    { target: `≤ ${EVENTS_TARGET} bytes (1 KB) per person-day, the events of its uploads`, pass: result.eventBytesPerPersonDay <= EVENTS_TARGET, actual: `${result.eventBytesPerPersonDay.toFixed(0)} bytes` },
  ]);
}

/** The resource API's micro-benchmark of the steps series (bench/steps-series.ts), when it is there. */
async function stepsSeriesMicro(): Promise<string[]> {
  const module = new URL('./steps-series.js', import.meta.url);
  if (!existsSync(fileURLToPath(module))) return [];
  const loaded = (await import(module.href)) as {
    runStepsSeriesBench?: (options: { log?: (line: string) => void }) => Promise<unknown>;
  };
  if (typeof loaded.runStepsSeriesBench !== 'function') return [];
  log('running the steps-series micro-benchmark (bench/steps-series.ts)…');
  const lines: string[] = [];
  extras.steps_series = await loaded.runStepsSeriesBench({ log: (line) => lines.push(line) });
  return lines;
}

async function main(): Promise<number> {
  const started = Date.now();
  installCleanup(runCleanups);
  const loadAtStart = loadavg()[0]!;
  if (process.env.UV_THREADPOOL_SIZE === undefined) {
    log('warning: libuv thread pool at its default size: the hashing bound (load 4) is not measured as stride hashes; run `npm run bench`');
  }
  log(`warm-up ${settings.warmupSeconds} s, ${settings.durationSeconds} s per load in interleaved slices, ${CONNECTIONS} connections; loads ${[...selected].join(',')}`);
  if (plainRun.length > 0) log(`STRIDE_PLAIN: the plain path of ${plainRun.join(', ')}`);

  const sqliteLoads = new Set(['1', '2', '3', '4', '8', '9', '10', '11', '12', '13', '16', '17'].filter((load) => selected.has(load)));
  // Load 5 is loads 1–3 and 7–13 again on PostgreSQL: those of them selected, or all when none is.
  const postgresKinds = ['1', '2', '3', '7', '8', '9', '10', '11', '12', '13', '15', '16', '17', '18', '19', '20'];
  let postgresLoads = new Set<string>();
  if (selected.has('5')) {
    if (postgresUrl) {
      postgresLoads = new Set(postgresKinds.filter((load) => selected.has(load)));
      if (postgresLoads.size === 0) postgresLoads = new Set(postgresKinds);
    } else {
      log('load 5 skipped: set DATABASE_URL=postgres://… to run loads 1–3 and 7–13 on PostgreSQL');
    }
  }
  // The size row first, on databases of its own, before the servers of the other loads start.
  if (selected.has('7')) await sizeLoad('sqlite');
  if (postgresLoads.has('7')) await sizeLoad('postgres');
  const postgresStrideChange = postgresLoads.has('15');
  const postgresTakeout = postgresLoads.has('18');
  const postgresTakeoutServer = postgresLoads.has('19');
  const postgresTakeoutSize = postgresLoads.has('20');
  const strideLoads = ['1', '2', '3', '8', '9', '10', '11', '12', '13', '16', '17'];
  if (postgresLoads.size > 0 && !strideLoads.some((load) => postgresLoads.has(load))) postgresLoads = new Set();
  const strides: StrideRun[] = [];
  if (sqliteLoads.size > 0) strides.push(await sqliteStride(sqliteLoads));
  else if (postgresLoads.size > 0) log('no SQLite load selected: the PostgreSQL rows are measured without a SQLite Stride beside them');
  const metricsLoads = new Set(['1', '2', '3'].filter((load) => sqliteLoads.has(load)));
  if (metricsLoads.size > 0) {
    const metered = await sqliteStride(metricsLoads, 'Stride SQLite + metrics', { METRICS_TOKEN: randomBytes(24).toString('base64url') });
    strides.push({ ...metered, withoutMetrics: strides[0] });
  }
  if (postgresLoads.size > 0) strides.push(await postgresStride(postgresLoads));
  const taking = (load: string) => strides.filter((s) => s.loads.has(load));

  const needsBare = ['1', '2', '8', '10', '13'].some((load) => taking(load).length > 0);
  const needsPeer = ['1', '3', '11', '12'].some((load) => taking(load).length > 0);
  const bare = needsBare ? await startBare() : undefined;
  const peer = needsPeer ? await startPeer() : undefined;

  if (taking('1').length > 0) await profileLoad(taking('1'), bare!, peer!);
  if (taking('2').length > 0) await readLoad('2 steps 30 days', taking('2'), bare!, READS.steps30, 0.3, undefined, true);
  if (taking('3').length > 0) await refreshLoad(taking('3'), peer!);
  if (sqliteLoads.has('4')) await flowLoad(strides[0]!);
  if (taking('8').length > 0) await readLoad('8 heart rate 30 days', taking('8'), bare!, READS.heartRate30, 0.3);
  if (taking('9').length > 0) await minuteHeartRateLoad(taking('9'));
  if (taking('10').length > 0) await readLoad('10 daily summary 30 days', taking('10'), bare!, READS.summary30, 0.2);
  if (taking('11').length > 0) await dpopProfileLoad(taking('11'), peer!);
  if (taking('12').length > 0) await dpopRefreshLoad(taking('12'), peer!);
  if (taking('13').length > 0) await devicePollLoad(taking('13'), bare!);
  if (taking('16').length > 0) await compatibleLoad('16 Fitbit steps 30 days', taking('16'), READS.steps30, READS.fitbitSteps30, 0.8);
  if (taking('17').length > 0) await compatibleLoad('17 Fitbit heart rate 1 day by minute', taking('17'), READS.heartRateMinutes, READS.fitbitHeartRateMinutes, 0.8);
  await stopAll();
  if (selected.has('6')) await uploadLoad();
  if (selected.has('14')) await clientRow();
  if (selected.has('15')) await strideChangeRows('sqlite');
  if (postgresStrideChange) await strideChangeRows('postgres');
  if (selected.has('18')) await takeoutImportRow('sqlite');
  if (postgresTakeout) await takeoutImportRow('postgres');
  await removeTakeoutArchive();
  if (selected.has('19')) await takeoutServerRows('sqlite');
  if (postgresTakeoutServer) await takeoutServerRows('postgres');
  await removeThreeYearArchive();
  if (selected.has('20')) await takeoutSizeRow('sqlite');
  if (postgresTakeoutSize) await takeoutSizeRow('postgres');
  const seriesLines = selected.has('2') ? await stepsSeriesMicro() : [];

  if (rows.length === 0) {
    process.stdout.write(`nothing was measured: BENCH_LOADS=${[...selected].join(',')} selects no load that can run here\n`);
    return 1;
  }
  rows.sort((a, b) => a.load.localeCompare(b.load, 'en', { numeric: true }));
  const table = formatTable(rows);
  const cpuTable = formatCpuTable(rows);
  const checks = formatChecks(rows);
  const failed = rows.flatMap((r) => r.checks).filter((check) => !check.pass).length;
  const elapsed = (Date.now() - started) / 1000;
  const loadAtEnd = loadavg()[0]!;
  process.stdout.write(`\n${table}\n\nCPU time per operation (measured slices; the server's threads, and this process):\n${cpuTable}\n\n${checks}\n\n`);
  process.stdout.write(`machine: ${machine().cpus} CPUs, load average ${loadAtStart.toFixed(2)} at the start, ${loadAtEnd.toFixed(2)} at the end${loadAtStart > 0.5 ? ' (the machine was not idle: ratios are noisier)' : ''}\n`);
  if (seriesLines.length > 0) {
    process.stdout.write(`steps series micro-benchmark (the route's series reader on SQLite, bench/steps-series.ts):\n${seriesLines.map((line) => `  ${line}`).join('\n')}\n\n`);
  }
  process.stdout.write(`${failed === 0 ? 'every target holds' : `${failed} target(s) missed`} · ${elapsed.toFixed(0)} s\n`);

  const file = await writeResults({
    started_at: new Date(started).toISOString(),
    elapsed_seconds: elapsed,
    machine: { ...machine(), load_average_start: loadAtStart, load_average_end: loadAtEnd },
    settings: { ...settings, pipelining: 1, keep_alive: true, interleaved_slices: true, argon2: ARGON2_OPTIONS, uv_threadpool_size: process.env.UV_THREADPOOL_SIZE ?? null, postgres: postgresUrl !== undefined, stride_plain: plainRun },
    rows,
    ...extras,
    targets_missed: failed,
  });
  process.stdout.write(`results: ${file}\n`);
  return failed === 0 ? 0 : 1;
}

main()
  .then(async (code) => {
    await stopAll();
    await runCleanups();
    process.exit(code);
  })
  .catch(async (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    await stopAll();
    await runCleanups();
    process.exit(2);
  });
