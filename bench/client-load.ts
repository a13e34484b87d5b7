/**
 * Load 14 of `npm run bench`, run only when asked (BENCH_LOADS=14): the profile GET through
 * @stride/client (openapi-fetch over the platform's fetch, the bearer, the typed answer) against
 * the same GET with undici's `request` directly, both parsing the JSON, interleaved in slices on
 * one SQLite Stride of its own. The client's cost is in this process, where both drivers run: the
 * ratio is what an app pays for the client on the same machine as the server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createStride } from '@stride/client';
import { interleave, percentile, type LoadSettings, type Measurement, type Workload } from './lib/loads.js';
import { obtainTokens } from './lib/oauth-client.js';
import { stopServer } from './lib/processes.js';
import { prepareStride, startStride, STRIDE_ENDPOINTS } from './lib/servers.js';

export interface ClientLoadResult {
  direct: Measurement;
  client: Measurement;
}

/** `workers` loops of `operation` for each slice, one latency per success. */
function concurrentWorkload(pid: number, workers: number, operation: () => Promise<unknown>): Workload {
  const latencies: number[] = [];
  const errors: string[] = [];
  let seconds = 0;
  const run = async (duration: number, record: boolean) => {
    const started = performance.now();
    const deadline = started + duration * 1000;
    const loop = async () => {
      while (performance.now() < deadline) {
        const begun = performance.now();
        try {
          await operation();
          if (record) latencies.push(performance.now() - begun);
        } catch (error) {
          if (record) errors.push(String(error).slice(0, 200));
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, loop));
    if (record) seconds += (performance.now() - started) / 1000;
  };
  return {
    pid,
    warmUp: (duration) => run(duration, false),
    runSlice: (duration) => run(duration, true),
    result: () => {
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        rate: sorted.length / seconds,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        ok: sorted.length,
        failed: errors.length,
        seconds,
        ...(errors.length > 0 && { note: `first error: ${errors[0]}` }),
      };
    },
  };
}

export async function clientLoad(settings: LoadSettings, log: (message: string) => void): Promise<ClientLoadResult> {
  const workDir = await mkdtemp(join(tmpdir(), 'stride-bench-client-'));
  const setup = await prepareStride(`sqlite:${join(workDir, 'stride.sqlite')}`, workDir);
  const server = await startStride(setup.databaseUrl, 'Stride SQLite (load 14)');
  const agent = new Agent({ connections: settings.connections });
  try {
    const [tokens] = await obtainTokens(server.origin, STRIDE_ENDPOINTS(server.origin), setup.client, setup.user, { scope: 'read_profile' }, 1);
    const accessToken = tokens!.access_token;
    const url = `${server.origin}/v1/users/me`;
    const direct = async () => {
      const { statusCode, body } = await request(url, { dispatcher: agent, headers: { authorization: `Bearer ${accessToken}` } });
      const profile = (await body.json()) as { id?: string };
      if (statusCode !== 200 || profile.id === undefined) throw new Error(`GET /v1/users/me answered ${statusCode}`);
    };
    // The token is valid for ACCESS_TOKEN_TTL (30 days): no refresh happens during the load.
    const person = createStride({ baseUrl: server.origin, ...setup.client }).person({
      accessToken,
      refreshToken: tokens!.refresh_token,
      expiresAt: Math.floor(Date.now() / 1000) + 86400,
      scope: ['read_profile'],
      tokenType: 'Bearer',
    });
    const throughClient = async () => {
      const profile = await person.get('/v1/users/me');
      if (profile.id === undefined) throw new Error('no profile');
    };
    log('load 14: the profile GET through @stride/client against undici directly…');
    const [directM, clientM] = await interleave(
      [concurrentWorkload(server.pid, settings.connections, direct), concurrentWorkload(server.pid, settings.connections, throughClient)],
      settings,
    );
    return { direct: directM!, client: clientM! };
  } finally {
    await agent.close();
    await stopServer(server);
    await rm(workDir, { recursive: true, force: true });
  }
}
