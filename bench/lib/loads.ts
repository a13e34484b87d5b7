/**
 * The load drivers. Fixed requests go through autocannon (keep-alive, no pipelining); loads where
 * each request depends on the previous answer (refresh chains, authorization-code flows) use a
 * driver of their own over node:http keep-alive agents, one connection per chain or flow worker.
 * Every loop stops at its deadline.
 */
import autocannon, { type Result as AutocannonResult } from 'autocannon';
import { verify, hash } from '@node-rs/argon2';
import { Browser, keepAliveAgent, send } from './http.js';
import { authorizeInBrowser, exchangeCode, refreshBody, type ClientCredentials, type Credentials, type ServerEndpoints } from './oauth-client.js';
import { sampleRss } from './processes.js';

export interface LoadSettings {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface Measurement {
  /** Successful requests (or flows, or hashes) per second. */
  rate: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  seconds: number;
  /** Peak resident memory of the server during the measured part, MB (null: not a server). */
  rssMb: number | null;
  /** Successes during the warm-up (refresh chains: rotations that must be in the database too). */
  warmupOk?: number;
  note?: string;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

function autocannonOnce(url: string, headers: Record<string, string>, settings: LoadSettings, seconds: number): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, headers, connections: settings.connections, pipelining: 1, duration: seconds, timeout: 10 },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** A fixed GET with keep-alive: warm-up, then the measured run with the server's RSS sampled. */
export async function fixedRequestLoad(
  url: string,
  headers: Record<string, string>,
  settings: LoadSettings,
  serverPid: number,
): Promise<Measurement> {
  if (settings.warmupSeconds > 0) await autocannonOnce(url, headers, settings, settings.warmupSeconds);
  const rss = sampleRss(serverPid);
  const result = await autocannonOnce(url, headers, settings, settings.durationSeconds);
  const { peakMb } = rss.stop();
  const ok = result.statusCodeStats['200']?.count ?? 0;
  const failed = result.non2xx + result.errors;
  return {
    rate: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: Number(ok),
    failed,
    seconds: result.duration,
    rssMb: peakMb,
    ...(failed > 0 && { note: `${failed} failed (status ${Object.keys(result.statusCodeStats).join(',')})` }),
  };
}

export interface RefreshTarget {
  tokenUrl: string;
  client: ClientCredentials;
}

/**
 * Refresh-token chains: each connection owns one chain and sends, in a loop, the refresh token
 * the previous answer returned. A chain that gets an error stops (its token is dead).
 */
interface DriverRun {
  latencies: number[];
  failed: number;
  errors: string[];
  elapsed: number;
}

/** Rate and latency percentiles of one measured run of a driver of our own. */
function summarize(run: DriverRun, rssMb: number): Measurement {
  const sorted = run.latencies.sort((a, b) => a - b);
  return {
    rate: sorted.length / run.elapsed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok: sorted.length,
    failed: run.failed,
    seconds: run.elapsed,
    rssMb,
  };
}

async function runChains(target: RefreshTarget, refreshTokens: string[], seconds: number): Promise<DriverRun> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let failed = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    refreshTokens.map(async (initial) => {
      const agent = keepAliveAgent(1);
      let token = initial;
      try {
        while (performance.now() < deadline) {
          const sent = performance.now();
          const response = await send(agent, target.tokenUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: refreshBody(target.client, token),
            timeoutMs: 10_000,
          });
          const next = response.status === 200 ? (JSON.parse(response.body) as { refresh_token?: string }).refresh_token : undefined;
          if (!next || next === token) {
            failed++;
            if (errors.length < 3) errors.push(`${response.status} ${response.body.slice(0, 160)}`);
            return;
          }
          latencies.push(performance.now() - sent);
          token = next;
        }
      } catch (error) {
        failed++;
        if (errors.length < 3) errors.push((error as Error).message);
      } finally {
        agent.destroy();
      }
    }),
  );
  return { latencies, failed, errors, elapsed: (performance.now() - started) / 1000 };
}

/**
 * Warm-up chains and measured chains are distinct, so no rotated token is ever sent again; each
 * set is obtained just before its phase (oidc-provider's default in-memory adapter is an LRU of
 * 1000 entries: tokens obtained long before would be evicted by the warm-up's rotations).
 */
export async function refreshChainLoad(
  target: RefreshTarget,
  obtainRefreshTokens: (count: number) => Promise<string[]>,
  settings: LoadSettings,
  serverPid: number,
): Promise<Measurement> {
  const warmup = settings.warmupSeconds > 0
    ? await runChains(target, await obtainRefreshTokens(settings.connections), settings.warmupSeconds)
    : null;
  const measuredTokens = await obtainRefreshTokens(settings.connections);
  const rss = sampleRss(serverPid);
  const run = await runChains(target, measuredTokens, settings.durationSeconds);
  const { peakMb } = rss.stop();
  return {
    ...summarize(run, peakMb),
    warmupOk: warmup?.latencies.length ?? 0,
    ...(run.failed + (warmup?.failed ?? 0) > 0 && { note: `${run.failed} chain(s) broke (${warmup?.failed ?? 0} in the warm-up): ${run.errors.join(' | ')}` }),
  };
}

export interface FlowTarget {
  origin: string;
  endpoints: ServerEndpoints;
  client: ClientCredentials;
  credentials: Credentials;
  scope: string;
}

/**
 * Complete authorization-code flows: a fresh browser (no session) each time — authorization
 * request, login page and POST, consent page and POST (prompt=consent), code exchange.
 */
async function runFlows(target: FlowTarget, concurrency: number, seconds: number): Promise<DriverRun> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let failed = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const agent = keepAliveAgent(1);
      try {
        while (performance.now() < deadline) {
          const began = performance.now();
          try {
            const browser = new Browser(target.origin, agent);
            const { code, verifier } = await authorizeInBrowser(browser, target.endpoints, target.client, target.credentials, {
              scope: target.scope,
              extra: { prompt: 'consent' },
            });
            await exchangeCode(agent, target.endpoints, target.client, code, verifier);
            latencies.push(performance.now() - began);
          } catch (error) {
            failed++;
            if (errors.length < 3) errors.push((error as Error).message.slice(0, 200));
            if (failed > 100) return;
          }
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  return { latencies, failed, errors, elapsed: (performance.now() - started) / 1000 };
}

export async function authorizationFlowLoad(target: FlowTarget, settings: LoadSettings, serverPid: number): Promise<Measurement> {
  if (settings.warmupSeconds > 0) await runFlows(target, settings.connections, settings.warmupSeconds);
  const rss = sampleRss(serverPid);
  const run = await runFlows(target, settings.connections, settings.durationSeconds);
  const { peakMb } = rss.stop();
  return {
    ...summarize(run, peakMb),
    ...(run.failed > 0 && { note: `${run.failed} flow(s) failed: ${run.errors.join(' | ')}` }),
  };
}

/**
 * The hashing bound: Argon2id verifications per second on this machine with the configured
 * parameters and the same library, as many in flight as the flow load has browsers.
 */
export async function hashingBound(options: Parameters<typeof hash>[1], concurrency: number, seconds: number): Promise<Measurement> {
  const password = 'correct horse battery staple';
  const stored = await hash(password, options);
  const latencies: number[] = [];
  let failed = 0;
  // A short warm-up so the thread pool is up.
  await Promise.all(Array.from({ length: 4 }, () => verify(stored, password)));
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const began = performance.now();
        if (await verify(stored, password)) latencies.push(performance.now() - began);
        else failed++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    rate: sorted.length / elapsed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok: sorted.length,
    failed,
    seconds: elapsed,
    rssMb: null,
  };
}
