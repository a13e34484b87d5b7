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
 *
 * Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2), BENCH_LOADS (e.g.
 * "1,3"), BENCH_CPU_PROF=DIR (run Stride under --cpu-prof, profiles written to DIR).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ARGON2_OPTIONS } from '../src/security/passwords.js';
import {
  authorizationFlowLoad,
  fixedRequestLoad,
  hashingBound,
  refreshChainLoad,
  type LoadSettings,
  type Measurement,
} from './lib/loads.js';
import { installCleanup, stopAll, stopServer, type ServerProcess } from './lib/processes.js';
import {
  formatChecks,
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
import { keepAliveAgent } from './lib/http.js';

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
const selected = new Set((process.env.BENCH_LOADS ?? '1,2,3,4,5').split(',').map((s) => s.trim()));
const cpuProfDir = process.env.BENCH_CPU_PROF;
const strideFlags = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
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

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface StrideRun {
  label: string;
  server: ServerProcess;
  setup: StrideSetup;
  /** Counts rotated refresh tokens in the database, from another connection than the server's. */
  countRotations: () => Promise<number>;
}

interface References {
  bare?: Measurement;
  peerUserinfo?: Measurement;
  peerRefresh?: Measurement;
}

/** Loads 1–3 against one Stride (SQLite or PostgreSQL). */
async function strideLoads(run: StrideRun, refs: References, prefix: string, loads: Set<string>): Promise<void> {
  const { server, setup } = run;
  const agent = keepAliveAgent(1);
  const endpoints = STRIDE_ENDPOINTS(server.origin);
  const [profileToken] = await obtainTokens(server.origin, endpoints, setup.client, setup.user, { scope: 'read_profile' }, 1, agent);
  const [stepsToken] = await obtainTokens(server.origin, endpoints, setup.client, setup.user, { scope: 'read_activity' }, 1, agent);
  agent.destroy();

  if (loads.has('1')) {
    const m = await fixedRequestLoad(`${server.origin}/v1/users/me`, bearer(profileToken!.access_token), settings, server.pid);
    const ratios: Record<string, number> = {};
    const checks: Check[] = [noErrorsCheck(m)];
    if (refs.bare) {
      ratios.bare = m.rate / refs.bare.rate;
      checks.push(ratioCheck('vs bare node:http', ratios.bare, 0.5));
    }
    if (refs.peerUserinfo) {
      ratios['oidc-provider'] = m.rate / refs.peerUserinfo.rate;
      checks.push(ratioCheck('vs oidc-provider userinfo', ratios['oidc-provider'], 4));
    }
    row(`${prefix}1 profile GET`, run.label, 'req/s', m, ratios, [...checks, p99Check(m), rssCheck(m)]);
  }

  if (loads.has('2')) {
    const { start, end } = setup.steps;
    const url = `${server.origin}/v1/users/me/activities/steps?start_time=${start}&end_time=${end}&granularity=day`;
    const m = await fixedRequestLoad(url, bearer(stepsToken!.access_token), settings, server.pid);
    const ratios: Record<string, number> = {};
    const checks: Check[] = [noErrorsCheck(m)];
    if (refs.bare) {
      ratios.bare = m.rate / refs.bare.rate;
      checks.push(ratioCheck('vs bare node:http', ratios.bare, 0.3));
    }
    row(`${prefix}2 steps 30 days`, run.label, 'req/s', m, ratios, [...checks, p99Check(m), rssCheck(m)]);
  }

  if (loads.has('3')) {
    const before = await run.countRotations();
    const m = await refreshChainLoad(
      { tokenUrl: endpoints.token, client: setup.client },
      async (count) => (await strideTokens(server, setup, count)).map((t) => t.refresh_token!),
      settings,
      server.pid,
    );
    const rotated = (await run.countRotations()) - before;
    const rotations = m.ok + (m.warmupOk ?? 0);
    const ratios: Record<string, number> = {};
    const checks: Check[] = [
      noErrorsCheck(m),
      { target: 'every rotation committed to the database', pass: rotated === rotations && rotations > 0, actual: `${rotated} rotated rows for ${rotations} answered rotations` },
    ];
    if (refs.peerRefresh) {
      ratios['oidc-provider'] = m.rate / refs.peerRefresh.rate;
      checks.push(ratioCheck('vs oidc-provider refresh', ratios['oidc-provider'], 2));
    }
    row(`${prefix}3 refresh chains`, run.label, 'req/s', m, ratios, [...checks, p99Check(m), rssCheck(m)]);
  }
}

async function sqliteRun(references: References): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  const file = join(workDir, 'stride.sqlite');
  log('preparing Stride on SQLite (accounts, app, 30 days of minute steps)…');
  const setup = await prepareStride(`sqlite:${file}`, workDir);
  const server = await startStride(setup.databaseUrl, 'Stride SQLite', { nodeFlags: strideFlags });
  const countRotations = async () => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM refresh_tokens WHERE rotated_at IS NOT NULL').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  await strideLoads({ label: 'Stride SQLite', server, setup, countRotations }, references, '', selected);

  if (selected.has('4')) {
    log('measuring the Argon2id bound…');
    const bound = await hashingBound({ ...ARGON2_OPTIONS }, CONNECTIONS, Math.min(5, Math.max(1, settings.durationSeconds / 2)));
    row('4 hashing bound', 'Argon2id verify (this machine)', 'hash/s', bound);
    const m = await authorizationFlowLoad(
      {
        origin: server.origin,
        endpoints: STRIDE_ENDPOINTS(server.origin),
        client: setup.client,
        credentials: setup.flowUser,
        scope: ALL_SCOPES,
      },
      settings,
      server.pid,
    );
    const ratio = m.rate / bound.rate;
    row('4 authorization-code flows', 'Stride SQLite', 'flow/s', m, { 'hashing bound': ratio }, [
      noErrorsCheck(m),
      ratioCheck('vs the hashing bound', ratio, 0.7),
      rssCheck(m),
    ]);
  }
  await stopServer(server);
}

async function postgresRun(references: References): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresUrl });
  // DROP … WITH (FORCE) ends the other sessions on an interrupted run; that is expected.
  admin.on('error', () => undefined);
  await admin.connect();
  const database = `stride_bench_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const dropDatabase = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  };
  cleanups.push(dropDatabase);
  const url = new URL(postgresUrl!);
  url.pathname = `/${database}`;
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-pg-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  log(`preparing Stride on PostgreSQL (database ${database})…`);
  const setup = await prepareStride(url.toString(), workDir);
  const server = await startStride(setup.databaseUrl, 'Stride PostgreSQL', { nodeFlags: strideFlags });
  const reader = new pg.Client({ connectionString: url.toString() });
  reader.on('error', () => undefined);
  await reader.connect();
  try {
    const countRotations = async () =>
      Number((await reader.query('SELECT count(*) AS n FROM refresh_tokens WHERE rotated_at IS NOT NULL')).rows[0].n);
    // Load 5 is loads 1–3 again: those of them selected, or all three when none is.
    const again = new Set(['1', '2', '3'].filter((load) => selected.has(load)));
    await strideLoads({ label: 'Stride PostgreSQL', server, setup, countRotations }, references, '5/', again.size > 0 ? again : new Set(['1', '2', '3']));
  } finally {
    await reader.end();
    await stopServer(server);
  }
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
  log(`warm-up ${settings.warmupSeconds} s, ${settings.durationSeconds} s per load, ${CONNECTIONS} connections; loads ${[...selected].join(',')}`);

  const references: References = {};
  if (selected.has('1') || selected.has('2') || selected.has('3')) {
    const bare = await startBare();
    let peer: PeerSetup | undefined;
    try {
      if (selected.has('1') || selected.has('2')) {
        references.bare = row('1 profile GET', 'bare node:http', 'req/s', await fixedRequestLoad(`${bare.origin}/`, {}, settings, bare.pid)).measurement;
      }
      await stopServer(bare);
      peer = await startPeer();
      if (selected.has('1')) {
        const [token] = await peerTokens(peer, 'openid profile', 1);
        const m = await fixedRequestLoad(peer.endpoints.userinfo, bearer(token!.access_token), settings, peer.server.pid);
        references.peerUserinfo = row('1 profile GET', 'oidc-provider userinfo', 'req/s', m, {}, [noErrorsCheck(m)]).measurement;
      }
      if (selected.has('3')) {
        const m = await refreshChainLoad(
          { tokenUrl: peer.endpoints.token, client: peer.client },
          async (count) => (await peerTokens(peer!, 'read_profile', count)).map((t) => t.refresh_token!),
          settings,
          peer.server.pid,
        );
        references.peerRefresh = row('3 refresh chains', 'oidc-provider', 'req/s', m, {}, [noErrorsCheck(m)]).measurement;
      }
    } finally {
      await stopServer(bare);
      if (peer) await stopServer(peer.server);
    }
  }

  if (['1', '2', '3', '4'].some((load) => selected.has(load))) await sqliteRun(references);
  const seriesLines = selected.has('2') ? await stepsSeriesMicro() : [];
  if (selected.has('5')) {
    if (postgresUrl) await postgresRun(references);
    else log('load 5 skipped: set DATABASE_URL=postgres://… to run loads 1–3 on PostgreSQL');
  }

  rows.sort((a, b) => a.load.localeCompare(b.load, 'en', { numeric: true }));
  const table = formatTable(rows);
  const checks = formatChecks(rows);
  const failed = rows.flatMap((r) => r.checks).filter((check) => !check.pass).length;
  const elapsed = (Date.now() - started) / 1000;
  const loadAtEnd = loadavg()[0]!;
  process.stdout.write(`\n${table}\n\n${checks}\n\n`);
  // Other processes on the machine take CPU from whichever server is being measured at the time.
  process.stdout.write(`machine: ${machine().cpus} CPUs, load average ${loadAtStart.toFixed(2)} at the start, ${loadAtEnd.toFixed(2)} at the end${loadAtStart > 0.5 ? ' (the machine was not idle: ratios are noisier)' : ''}\n`);
  if (seriesLines.length > 0) {
    process.stdout.write(`steps series micro-benchmark (the route's series reader on SQLite, bench/steps-series.ts):\n${seriesLines.map((line) => `  ${line}`).join('\n')}\n\n`);
  }
  process.stdout.write(`${failed === 0 ? 'every target holds' : `${failed} target(s) missed`} · ${elapsed.toFixed(0)} s\n`);

  const file = await writeResults({
    started_at: new Date(started).toISOString(),
    elapsed_seconds: elapsed,
    machine: { ...machine(), load_average_start: loadAtStart, load_average_end: loadAtEnd },
    settings: { ...settings, pipelining: 1, keep_alive: true, argon2: ARGON2_OPTIONS, postgres: postgresUrl !== undefined },
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
