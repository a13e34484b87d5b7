/**
 * The load drivers, and how a load is measured against its references: side by side, in
 * interleaved slices. Every workload of a comparison (Stride and its references) gets a warm-up,
 * then the measured time is cut into slices of about two seconds taken in turn — Stride, the bare
 * server, the peer, Stride, … — so that whatever else the machine is doing at the moment (on a
 * shared virtual machine, other tenants take CPU for seconds at a time) weighs on each of them
 * alike, and a ratio compares like with like. Each workload still gets its full measured time.
 *
 * Fixed requests go through autocannon (keep-alive, no pipelining; the latency of every answer of
 * every slice goes into one histogram, in microseconds). Loads where each request depends on the
 * previous answer (refresh chains, authorization-code flows) use a driver of their own on undici
 * (lib/browser.ts): one keep-alive HTTP/1.1 connection per chain or flow worker, which pause
 * between slices.
 */
import autocannon, { type Result as AutocannonResult } from 'autocannon';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { verify, hash } from '@node-rs/argon2';
import type { Client } from 'undici';
import { Browser, connection } from './browser.js';
import { authorizeInBrowser, exchangeCode, refreshBody, type ClientCredentials, type Credentials, type ServerEndpoints } from './oauth-client.js';
import { newProofKey, proofsForSlice, signProof, verifySignature, type ProofPool } from './dpop-proofs.js';
import { processCpu, sampleRss } from './processes.js';

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
  /** Peak resident memory of the server during its measured slices, MB (null: not a server). */
  rssMb: number | null;
  /** CPU time per success during the measured slices, µs (see CpuPerOperation). */
  cpu: CpuPerOperation;
  /** Successes during the warm-up (refresh chains: rotations that must be in the database too). */
  warmupOk?: number;
  note?: string;
}

/**
 * Where the CPU of one operation went: the server's event loop and its other threads (null: no
 * server process), and this process — the load driver, or the hashing itself for the hashing
 * bound. All of them share the machine's cores, so together they bound the rate.
 */
export interface CpuPerOperation {
  serverLoopUs: number | null;
  serverThreadsUs: number | null;
  driverUs: number;
}

/** One side of a comparison: something that can run for a while and say what it measured. */
export interface Workload {
  /** The server process whose memory is sampled while the workload runs (null: none). */
  readonly pid: number | null;
  warmUp(seconds: number): Promise<void>;
  /** Runs for `seconds` more; what it measures adds up over the slices. */
  runSlice(seconds: number): Promise<void>;
  /** Everything the slices measured (the RSS is the interleaver's). */
  result(): Omit<Measurement, 'rssMb' | 'cpu'>;
  /** Lets go of connections kept between slices. */
  close?(): void;
  /**
   * Called before the warm-up and before each slice, outside what the slice measures (its time
   * and this process's CPU): work of the client that is not part of the load, such as signing
   * the DPoP proofs the next `seconds` will send.
   */
  prepareSlice?(seconds: number): void | Promise<void>;
}

/** About this long per slice: long enough for 32 connections to settle, short against noise. */
export const SLICE_SECONDS = 2;

/**
 * Warms every workload up, then measures them in turn, slice by slice, `durationSeconds` each.
 * Workloads whose operations take a large part of a second (a whole authorization flow, an
 * Argon2id verification) take longer slices: a slice ends when its last operation does, and the
 * workers that finish first wait idle meanwhile.
 */
export async function interleave(workloads: readonly Workload[], settings: LoadSettings, sliceSeconds = SLICE_SECONDS): Promise<Measurement[]> {
  if (settings.warmupSeconds > 0) {
    for (const workload of workloads) {
      await workload.prepareSlice?.(settings.warmupSeconds);
      await workload.warmUp(settings.warmupSeconds);
    }
  }
  const slices = Math.max(1, Math.round(settings.durationSeconds / sliceSeconds));
  const peaks: Array<number | null> = workloads.map(() => null);
  const cpu = workloads.map(() => ({ loopMs: 0, threadsMs: 0, driverMs: 0 }));
  for (let slice = 0; slice < slices; slice++) {
    for (const [i, workload] of workloads.entries()) {
      await workload.prepareSlice?.(settings.durationSeconds / slices);
      const { pid } = workload;
      const rss = pid === null ? null : sampleRss(pid);
      const serverBefore = pid === null ? null : processCpu(pid);
      const driverBefore = process.cpuUsage();
      await workload.runSlice(settings.durationSeconds / slices);
      const driver = process.cpuUsage(driverBefore);
      const serverAfter = pid === null ? null : processCpu(pid);
      if (rss) peaks[i] = Math.max(peaks[i] ?? 0, rss.stop().peakMb);
      cpu[i]!.driverMs += (driver.user + driver.system) / 1000;
      if (serverBefore && serverAfter) {
        cpu[i]!.loopMs += serverAfter.mainMs - serverBefore.mainMs;
        cpu[i]!.threadsMs += serverAfter.otherMs - serverBefore.otherMs;
      }
    }
  }
  const measurements = workloads.map((workload, i) => {
    const result = workload.result();
    const perOperation = (ms: number) => (result.ok > 0 ? (ms * 1000) / result.ok : NaN);
    const server = workload.pid !== null;
    return {
      ...result,
      rssMb: peaks[i]!,
      cpu: {
        serverLoopUs: server ? perOperation(cpu[i]!.loopMs) : null,
        serverThreadsUs: server ? perOperation(cpu[i]!.threadsMs) : null,
        driverUs: perOperation(cpu[i]!.driverMs),
      },
    };
  });
  for (const workload of workloads) workload.close?.();
  return measurements;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/**
 * One autocannon run. autocannon's own latency histogram keeps whole milliseconds (a 0.4 ms answer
 * counts as 0), too coarse for answers that take a fraction of one; with `latencies`, each 2xx
 * answer's time is also recorded there in microseconds, as autocannon measured it.
 */
function autocannonRun(url: string, headers: Record<string, string>, connections: number, seconds: number, latencies?: RecordableHistogram, body?: string, perRequest?: () => Record<string, string>): Promise<AutocannonResult> {
  // With `perRequest`, autocannon rebuilds each request with its headers added (a new DPoP proof).
  const requests = perRequest && [{ setupRequest: (request: { headers?: Record<string, string> }) => ({ ...request, headers: { ...headers, ...perRequest() } }) }];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        headers,
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
        skipAggregateResult: true,
        ...(body !== undefined && { method: 'POST' as const, body }),
        ...(requests && { requests }),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    if (latencies) {
      instance.on('response', (_client, statusCode, _bytes, ms) => {
        if (statusCode >= 200 && statusCode < 300) latencies.record(Math.max(1, Math.round(ms * 1000)));
      });
    }
  });
}

/**
 * The same GET (or, with `body`, POST) over and over on `connections` keep-alive connections
 * (autocannon); with `proofs`, each request also carries a new DPoP proof from the pool, signed
 * before the slice.
 */
export function fixedRequestWorkload(url: string, headers: Record<string, string>, connections: number, pid: number, body?: string, proofs?: ProofPool): Workload {
  const slices: AutocannonResult[] = [];
  const latencies = createHistogram();
  let seconds = 0;
  let answered = 0;
  const perRequest = proofs && (() => ({ dpop: proofs.take() }));
  return {
    pid,
    async warmUp(duration) {
      await autocannonRun(url, headers, connections, duration, undefined, body, perRequest);
      if (proofs) proofs.signedLate = 0;
    },
    async runSlice(duration) {
      const started = performance.now();
      const slice = await autocannonRun(url, headers, connections, duration, latencies, body, perRequest);
      slices.push(slice);
      answered += slice.statusCodeStats['200']?.count ?? 0;
      seconds += (performance.now() - started) / 1000;
    },
    ...(proofs && {
      prepareSlice(duration: number) {
        proofs.refill(proofsForSlice(duration, answered, seconds, 4000));
      },
    }),
    result() {
      let ok = 0;
      let failed = 0;
      const statuses = new Set<string>();
      for (const slice of slices) {
        ok += slice.statusCodeStats['200']?.count ?? 0;
        failed += slice.non2xx + slice.errors;
        for (const status of Object.keys(slice.statusCodeStats)) statuses.add(status);
      }
      const ms = (percentile: number) => (latencies.count > 0 ? latencies.percentile(percentile) / 1000 : NaN);
      const notes = [
        ...(failed > 0 ? [`${failed} failed (status ${[...statuses].join(',')})`] : []),
        ...(proofs && proofs.signedLate > 0 ? [`${proofs.signedLate} DPoP proofs signed during the slices`] : []),
      ];
      return {
        rate: ok / seconds,
        p50: ms(50),
        p99: ms(99),
        ok,
        failed,
        seconds,
        ...(notes.length > 0 && { note: notes.join('; ') }),
      };
    },
  };
}

/** `operation` run back to back in this process for each slice: a limit with nothing in front of it. */
export function inProcessWorkload(operation: () => Promise<unknown>): Workload {
  const tally = new DriverTally();
  const loop = async (deadline: number, record: boolean) => {
    while (performance.now() < deadline) {
      const started = performance.now();
      await operation();
      if (record) tally.latencies.push(performance.now() - started);
    }
  };
  return {
    pid: null,
    warmUp: (seconds) => loop(performance.now() + seconds * 1000, false),
    runSlice: (seconds) => forSeconds(tally, [0], seconds, (_worker, deadline) => loop(deadline, true)),
    result: () => tally.summary(),
  };
}

/** What a driver of our own measured: one latency per success. */
class DriverTally {
  readonly latencies: number[] = [];
  readonly errors: string[] = [];
  failed = 0;
  seconds = 0;

  fail(message: string): void {
    this.failed++;
    if (this.errors.length < 3) this.errors.push(message.slice(0, 200));
  }

  summary(): Omit<Measurement, 'rssMb' | 'cpu'> {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      rate: sorted.length / this.seconds,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      ok: sorted.length,
      failed: this.failed,
      seconds: this.seconds,
    };
  }
}

/** Runs `loop` on each of `workers` until `seconds` have passed (every loop checks the deadline). */
async function forSeconds<W>(tally: DriverTally, workers: readonly W[], seconds: number, loop: (worker: W, deadline: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(workers.map((worker) => loop(worker, deadline)));
  tally.seconds += (performance.now() - started) / 1000;
}

export interface RefreshTarget {
  tokenUrl: string;
  client: ClientCredentials;
  /** DPoP-bound chains: each rotation carries a new proof of the key the chains are bound to. */
  proofs?: ProofPool;
}

interface Chain {
  client: Client;
  token: string;
  broken: boolean;
}

/** One headers object for every rotation, so that no request builds its own (but for a DPoP proof). */
const REFRESH_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };

const refreshHeaders = (target: RefreshTarget) => (target.proofs ? { ...REFRESH_HEADERS, dpop: target.proofs.take() } : REFRESH_HEADERS);
const REFRESH_TIMEOUT_MS = 10_000;

/** Sends the chain's refresh token until the deadline, keeping the one each answer returns. */
async function refreshUntil(target: RefreshTarget, path: string, chain: Chain, deadline: number, tally: DriverTally): Promise<void> {
  while (!chain.broken && performance.now() < deadline) {
    const sent = performance.now();
    try {
      const response = await chain.client.request({ path, method: 'POST', headers: refreshHeaders(target), body: refreshBody(target.client, chain.token) });
      const body = await response.body.text();
      const next = response.statusCode === 200 ? (JSON.parse(body) as { refresh_token?: string }).refresh_token : undefined;
      if (!next || next === chain.token) {
        chain.broken = true;
        tally.fail(`${response.statusCode} ${body.slice(0, 160)}`);
        return;
      }
      tally.latencies.push(performance.now() - sent);
      chain.token = next;
    } catch (error) {
      chain.broken = true;
      tally.fail((error as Error).message);
    }
  }
}

/**
 * Refresh-token chains: each connection owns one chain and sends, in a loop, the refresh token
 * the previous answer returned; a chain that gets an error stops (its token is dead). Warm-up
 * chains and measured chains are distinct, so no rotated token is ever sent again; each set is
 * obtained just before it is first used (oidc-provider's default in-memory adapter is an LRU of
 * 1000 entries: tokens obtained long before would be evicted by the warm-up's rotations).
 */
export function refreshChainWorkload(
  target: RefreshTarget,
  obtainRefreshTokens: (count: number) => Promise<string[]>,
  connections: number,
  pid: number,
): Workload {
  const warmup = new DriverTally();
  const measured = new DriverTally();
  let chains: Chain[] | undefined;
  const tokenUrl = new URL(target.tokenUrl);
  const { origin } = tokenUrl;
  const path = tokenUrl.pathname + tokenUrl.search;
  const newChains = async () =>
    (await obtainRefreshTokens(connections)).map((token) => ({ client: connection(origin, REFRESH_TIMEOUT_MS), token, broken: false }));
  const close = (list: Chain[]) => list.forEach((chain) => void chain.client.destroy());
  const { proofs } = target;
  let warmedUp = false;
  return {
    pid,
    async warmUp(seconds) {
      const warmupChains = await newChains();
      await forSeconds(warmup, warmupChains, seconds, (chain, deadline) => refreshUntil(target, path, chain, deadline, warmup));
      close(warmupChains);
      warmedUp = true;
      if (proofs) proofs.signedLate = 0;
    },
    ...(proofs && {
      async prepareSlice(seconds: number) {
        // The measured chains (after the warm-up's) are obtained first, so that the proofs are
        // signed last, just before the slice.
        if (warmedUp) chains ??= await newChains();
        // Before the first measured slice, the warm-up's rate: its chains rotate as fast.
        const seen = measured.seconds > 0 ? measured : warmup;
        proofs.refill(proofsForSlice(seconds, seen.latencies.length, seen.seconds, 1000));
      },
    }),
    async runSlice(seconds) {
      chains ??= await newChains();
      await forSeconds(measured, chains, seconds, (chain, deadline) => refreshUntil(target, path, chain, deadline, measured));
    },
    result() {
      const failed = measured.failed + warmup.failed;
      const notes = [
        ...(failed > 0 ? [`${measured.failed} chain(s) broke (${warmup.failed} in the warm-up): ${[...measured.errors, ...warmup.errors].join(' | ')}`] : []),
        ...(proofs && proofs.signedLate > 0 ? [`${proofs.signedLate} DPoP proofs signed during the slices`] : []),
      ];
      return {
        ...measured.summary(),
        warmupOk: warmup.latencies.length,
        ...(notes.length > 0 && { note: notes.join('; ') }),
      };
    },
    close() {
      if (chains) close(chains);
    },
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
export function authorizationFlowWorkload(target: FlowTarget, concurrency: number, pid: number): Workload {
  const clients = Array.from({ length: concurrency }, () => connection(target.origin));
  const measured = new DriverTally();
  const flowsUntil = (tally: DriverTally) => async (client: Client, deadline: number) => {
    while (performance.now() < deadline && tally.failed <= 100) {
      const began = performance.now();
      try {
        const browser = new Browser(target.origin, client);
        const { code, verifier } = await authorizeInBrowser(browser, target.endpoints, target.client, target.credentials, {
          scope: target.scope,
          extra: { prompt: 'consent' },
        });
        await exchangeCode(client, target.endpoints, target.client, code, verifier);
        tally.latencies.push(performance.now() - began);
      } catch (error) {
        tally.fail((error as Error).message);
      }
    }
  };
  return {
    pid,
    async warmUp(seconds) {
      const warmup = new DriverTally();
      await forSeconds(warmup, clients, seconds, flowsUntil(warmup));
    },
    async runSlice(seconds) {
      await forSeconds(measured, clients, seconds, flowsUntil(measured));
    },
    result: () => ({
      ...measured.summary(),
      ...(measured.failed > 0 && { note: `${measured.failed} flow(s) failed: ${measured.errors.join(' | ')}` }),
    }),
    close() {
      clients.forEach((client) => void client.destroy());
    },
  };
}

/**
 * The hashing bound: Argon2id verifications per second on this machine with the configured
 * parameters and the same library (in this process), as many in flight as the flow load has
 * browsers. `npm run bench` sizes this process's libuv pool as `stride` sizes its own, one thread
 * per core (src/thread-pool.cts): the fastest this machine hashes (libuv's default four threads on
 * two cores verify about 5 % fewer per second).
 */
export function hashingWorkload(options: Parameters<typeof hash>[1], concurrency: number): Workload {
  const password = 'correct horse battery staple';
  let stored: string | undefined;
  const measured = new DriverTally();
  const workers = Array.from({ length: concurrency }, (_, i) => i);
  const verifyUntil = (tally: DriverTally) => async (_worker: number, deadline: number) => {
    while (performance.now() < deadline) {
      const began = performance.now();
      if (await verify(stored!, password)) tally.latencies.push(performance.now() - began);
      else tally.fail('a verification failed');
    }
  };
  return {
    pid: null,
    async warmUp(seconds) {
      stored ??= await hash(password, options);
      const warmup = new DriverTally();
      await forSeconds(warmup, workers, seconds, verifyUntil(warmup));
    },
    async runSlice(seconds) {
      stored ??= await hash(password, options);
      await forSeconds(measured, workers, seconds, verifyUntil(measured));
    },
    result: () => measured.summary(),
  };
}

/**
 * The proof-verification bound: ES256 signature checks per second on one core of this machine
 * with nothing else (the bench process's event loop, synchronously), of a DPoP proof as the loads
 * send them. A server's DPoP request costs at least this check; the key is imported once, so the
 * bound leaves out the JWK import and the thumbprint a server also has to do.
 */
export function proofVerificationWorkload(): Workload {
  const key = newProofKey();
  const proof = signProof(key, { htm: 'GET', htu: 'http://127.0.0.1/v1/users/me', ath: 'x'.repeat(43) });
  const measured = new DriverTally();
  const verifyUntil = (tally: DriverTally) => async (_worker: number, deadline: number) => {
    while (performance.now() < deadline) {
      const began = performance.now();
      if (verifySignature(proof, key.publicKey)) tally.latencies.push(performance.now() - began);
      else tally.fail('a signature did not verify');
    }
  };
  return {
    pid: null,
    async warmUp(seconds) {
      await forSeconds(new DriverTally(), [0], seconds, verifyUntil(new DriverTally()));
    },
    async runSlice(seconds) {
      await forSeconds(measured, [0], seconds, verifyUntil(measured));
    },
    result: () => measured.summary(),
  };
}
