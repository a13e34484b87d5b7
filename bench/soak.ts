/**
 * `npm run soak`: minutes of mixed load on the embedded default (a SQLite file), to show that
 * Stride holds steady: no 5xx, memory flat after the first minute, latency flat, and tables no
 * larger than what the sweeper keeps.
 *
 * The load, paced to SOAK_RATE requests per second in all:
 *   - refresh chains: each rotates its refresh token (RFC 6749 §6), reads the profile and a
 *     7-day steps series with the new access token, and now and then uploads a day of minutes;
 *   - SOAK_FLOWS times a second, one browser at a time: a complete authorization-code flow (sign-in
 *     with Argon2id, consent, exchange), then the refresh token revoked (RFC 7009) and its access
 *     token checked refused. Sign-ins are rarer than API calls, as on a real service.
 * Token, code and session lifetimes are short and the sweeper runs every SWEEP_INTERVAL, so that
 * expiry and sweeping happen many times during the run.
 *
 * Environment: SOAK_SECONDS (default 300), SOAK_RATE (requests/s, default 400), SOAK_CHAINS
 * (default 8), SOAK_FLOWS (flows/s, default 2). Exits 1 when a check fails.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Browser, connection, formBody, send, type Answer } from './lib/browser.js';
import { authorizeInBrowser, exchangeCode, refreshBody, type TokenSet } from './lib/oauth-client.js';
import { installCleanup, residentMb, stopAll, type ServerProcess } from './lib/processes.js';
import { writeResults } from './lib/report.js';
import { soakChecks, summarizeMinute, type MinuteSample, type MinuteSummary } from './lib/soak-report.js';
import { ALL_SCOPES, prepareStride, startStride, STRIDE_ENDPOINTS, strideTokens, type StrideSetup } from './lib/servers.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const RATE = Number(process.env.SOAK_RATE ?? 400);
const CHAINS = Number(process.env.SOAK_CHAINS ?? 8);
const FLOWS_PER_SECOND = Number(process.env.SOAK_FLOWS ?? 2);
const SWEEP_INTERVAL = 20;
const SERVER_ENV = {
  ACCESS_TOKEN_TTL: '60',
  REFRESH_TOKEN_TTL: '120',
  AUTH_CODE_TTL: '30',
  SESSION_TTL: '60',
  SWEEP_INTERVAL: String(SWEEP_INTERVAL),
};
/** Tables the sweeper keeps short, with their expiry column. */
const SWEPT_TABLES = ['authorization_codes', 'access_tokens', 'refresh_tokens', 'sessions'] as const;

const log = (line: string) => process.stderr.write(`soak: ${line}\n`);

class Recorder {
  readonly minutes: MinuteSample[] = [];
  readonly problems: string[] = [];
  private readonly startedAt = performance.now();

  private current(): MinuteSample {
    const index = Math.floor((performance.now() - this.startedAt) / 60_000);
    while (this.minutes.length <= index) this.minutes.push({ latenciesMs: [], byKind: {}, serverErrors: 0, unexpected: 0, rssMb: [] });
    return this.minutes[index]!;
  }

  /** Sends one request, records its latency and whether it was the status expected. */
  async request(label: string, expected: number, run: () => Promise<Answer>): Promise<Answer | null> {
    const started = performance.now();
    let response: Answer;
    try {
      response = await run();
    } catch (error) {
      this.unexpected(`${label}: ${(error as Error).message}`);
      return null;
    }
    const minute = this.current();
    const ms = performance.now() - started;
    minute.latenciesMs.push(ms);
    (minute.byKind[label] ??= []).push(ms);
    if (response.status >= 500) minute.serverErrors += 1;
    if (response.status !== expected) {
      this.unexpected(`${label}: ${response.status} ${response.body.slice(0, 160)}`);
      return null;
    }
    return response;
  }

  unexpected(problem: string): void {
    this.current().unexpected += 1;
    if (this.problems.length < 20) this.problems.push(problem);
  }

  rss(mb: number): void {
    this.current().rssMb.push(mb);
  }

  private readonly flowsMs: number[] = [];

  flow(ms: number): void {
    this.flowsMs.push(ms);
  }

  flowMedianMs(): number {
    const sorted = [...this.flowsMs].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? NaN;
  }
}

/** Spreads requests evenly at `perSecond` over every worker: each waits for its slot. */
function pacer(perSecond: number): () => Promise<void> {
  const interval = 1000 / perSecond;
  let next = performance.now();
  return async () => {
    const now = performance.now();
    next = Math.max(next + interval, now);
    if (next > now) await sleep(next - now);
  };
}

interface Run {
  server: ServerProcess;
  setup: StrideSetup;
  recorder: Recorder;
  pace: () => Promise<void>;
  until: number;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** One day of minute samples starting at `dayStart`, values from `seed`. */
function dayUpload(dayStart: number, seed: number): string {
  const samples = [];
  for (let minute = 0; minute < 1440; minute++) samples.push({ start_time: dayStart + minute * 60, value: (seed + minute * 7) % 200 });
  return JSON.stringify({ samples });
}

/** A refresh chain with reads and uploads, until the run ends. */
async function chain(run: Run, tokens: TokenSet, index: number): Promise<void> {
  const { server, setup, recorder, pace } = run;
  const client = connection(server.origin);
  const { end } = setup.steps;
  let current = tokens;
  try {
    for (let round = 0; Date.now() < run.until; round++) {
      await pace();
      const rotated = await recorder.request('refresh', 200, () =>
        send(client, '/oauth2/token', { method: 'POST', headers: FORM, body: refreshBody(setup.client, current.refresh_token!) }),
      );
      if (!rotated) return; // the chain is broken; the problem is recorded
      current = JSON.parse(rotated.body) as TokenSet;
      await pace();
      await recorder.request('profile', 200, () => send(client, '/v1/users/me', { headers: bearer(current.access_token) }));
      await pace();
      const week = `start_time=${end - 7 * 86400}&end_time=${end}&granularity=day`;
      await recorder.request('series', 200, () =>
        send(client, `/v1/users/me/activities/steps?${week}`, { headers: bearer(current.access_token) }),
      );
      if ((round + index) % 8 === 0) {
        await pace();
        const day = end - (1 + ((round * CHAINS + index) % 30)) * 86400;
        await recorder.request('upload', 200, () =>
          send(client, '/v1/users/me/activities/steps', {
            method: 'POST',
            headers: { ...bearer(current.access_token), 'content-type': 'application/json' },
            body: dayUpload(day, round),
          }),
        );
      }
    }
  } finally {
    await client.destroy();
  }
}

/** Complete authorization-code flows, each followed by a revocation that must take effect. */
async function flowsAndRevocations(run: Run): Promise<number> {
  const { server, setup, recorder, pace } = run;
  let flows = 0;
  const nextFlow = pacer(FLOWS_PER_SECOND);
  while (Date.now() < run.until) {
    await nextFlow();
    const client = connection(server.origin);
    try {
      await pace();
      const started = performance.now();
      const browser = new Browser(server.origin, client);
      const { code, verifier } = await authorizeInBrowser(browser, STRIDE_ENDPOINTS(server.origin), setup.client, setup.flowUser, { scope: ALL_SCOPES });
      const tokens = await exchangeCode(client, STRIDE_ENDPOINTS(server.origin), setup.client, code, verifier);
      recorder.flow(performance.now() - started);
      await pace();
      const body = formBody({ token: tokens.refresh_token, client_id: setup.client.clientId, client_secret: setup.client.clientSecret });
      await recorder.request('revoke', 200, () => send(client, '/oauth2/revoke', { method: 'POST', headers: FORM, body }));
      await pace();
      await recorder.request('revoked token refused', 401, () => send(client, '/v1/users/me', { headers: bearer(tokens.access_token) }));
      flows += 1;
    } catch (error) {
      recorder.unexpected(`flow: ${(error as Error).message}`);
      await sleep(1000);
    } finally {
      await client.destroy();
    }
  }
  return flows;
}

/** Rows per swept table, and how many of them expired longer ago than a sweep interval (plus slack). */
function tableRows(file: string): Record<string, { rows: number; overdue: number }> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const cutoff = Math.floor(Date.now() / 1000) - SWEEP_INTERVAL - 10;
    const counts: Record<string, { rows: number; overdue: number }> = {};
    for (const table of SWEPT_TABLES) {
      const row = db.prepare(`select count(*) as n, sum(expires_at <= ?) as overdue from ${table}`).get(cutoff) as { n: number; overdue: number | null };
      counts[table] = { rows: row.n, overdue: row.overdue ?? 0 };
    }
    counts.step_days = { rows: (db.prepare('select count(*) as n from series_days').get() as { n: number }).n, overdue: 0 };
    return counts;
  } finally {
    db.close();
  }
}

function formatMinutes(minutes: readonly MinuteSummary[]): string {
  const header = ['minute', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'RSS MB (end/peak)', '5xx', 'unexpected'];
  const rows = minutes.map((m) => [
    String(m.minute),
    String(m.requests),
    m.perSecond.toFixed(0),
    m.p50Ms.toFixed(2),
    m.p99Ms.toFixed(2),
    `${m.rssEndMb.toFixed(0)} / ${m.rssPeakMb.toFixed(0)}`,
    String(m.serverErrors),
    String(m.unexpected),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((cells) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
}

function formatKinds(minutes: readonly MinuteSummary[]): string {
  const kinds = [...new Set(minutes.flatMap((m) => Object.keys(m.p99ByKindMs)))];
  const header = ['minute', ...kinds];
  const rows = minutes.map((m) => [String(m.minute), ...kinds.map((k) => m.p99ByKindMs[k]?.toFixed(2) ?? '—')]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((cells) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
}

async function main(): Promise<void> {
  installCleanup();
  const dir = await mkdtemp(join(tmpdir(), 'stride-soak-'));
  const file = join(dir, 'stride.sqlite');
  const databaseUrl = `sqlite:${file}`;
  try {
    log('preparing accounts, an app and 30 days of steps…');
    const setup = await prepareStride(databaseUrl, dir);
    const server = await startStride(databaseUrl, 'Stride (soak)', { env: SERVER_ENV });
    const chains = await strideTokens(server, setup, CHAINS);
    const recorder = new Recorder();
    const run: Run = { server, setup, recorder, pace: pacer(RATE), until: Date.now() + SECONDS * 1000 };
    log(`${SECONDS} s of mixed load at ${RATE} requests/s: ${CHAINS} refresh chains with reads and uploads, flows with revocations`);
    const tables: Array<ReturnType<typeof tableRows>> = [];
    const sampler = setInterval(() => {
      const mb = residentMb(server.pid);
      if (mb !== null) recorder.rss(mb);
    }, 1000);
    const tableSampler = setInterval(() => tables.push(tableRows(file)), 60_000);
    const [flows] = await Promise.all([flowsAndRevocations(run), ...chains.map((tokens, i) => chain(run, tokens, i))]);
    clearInterval(sampler);
    clearInterval(tableSampler);
    // The sweeper's next pass has run since the load ended: nothing overdue may remain.
    await sleep((SWEEP_INTERVAL + 2) * 1000);
    const finalTables = tableRows(file);

    // Requests answered after the end belong to no minute of the run.
    const minutes = recorder.minutes
      .slice(0, Math.ceil(SECONDS / 60))
      .map((m, i) => summarizeMinute(i, m, Math.min(60, SECONDS - i * 60)));
    const checks = soakChecks(minutes);
    const overdue = Object.entries(finalTables).filter(([, c]) => c.overdue > 0);
    checks.push({
      target: 'no table keeps rows the sweeper should have deleted',
      pass: overdue.length === 0,
      actual: overdue.length === 0 ? 'none overdue' : overdue.map(([t, c]) => `${t}: ${c.overdue}`).join(', '),
    });

    const out = process.stdout;
    out.write(`\nsoak: ${SECONDS} s, ${RATE} requests/s paced, ${CHAINS} refresh chains, ${flows} flows with revocations at up to ${FLOWS_PER_SECOND}/s (median ${recorder.flowMedianMs().toFixed(0)} ms)\n\n`);
    out.write(`${formatMinutes(minutes)}\n\n`);
    out.write(`p99 ms by kind of request:\n${formatKinds(minutes)}\n\n`);
    out.write('rows per minute (codes, access tokens, refresh tokens, sessions, step days):\n');
    for (const [i, t] of [...tables, finalTables].entries()) {
      const label = i < tables.length ? `  after minute ${i + 1}` : '  at the end';
      out.write(`${label}: ${SWEPT_TABLES.map((name) => t[name]!.rows).join(', ')}, ${t.step_days!.rows}\n`);
    }
    out.write(`\n${checks.map((c) => `${c.pass ? 'PASS' : 'FAIL'}  soak: ${c.target} — ${c.actual}`).join('\n')}\n`);
    if (recorder.problems.length > 0) out.write(`\nfirst unexpected answers:\n${recorder.problems.map((p) => `  ${p}`).join('\n')}\n`);
    const path = await writeResults({ kind: 'soak', seconds: SECONDS, rate: RATE, chains: CHAINS, flows, minutes, tables: [...tables, finalTables], checks });
    out.write(`\nresults: ${path}\n`);
    await stopAll();
    process.exitCode = checks.every((c) => c.pass) ? 0 : 1;
  } finally {
    await stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
