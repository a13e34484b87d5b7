/**
 * Load 6 of `npm run bench` (docs/webhooks.md): step uploads of one day of minutes per request,
 * (a) against the same upserts on the same SQLite file with nothing in front — the store call the
 * route makes, which reads the day's packed row (and the distance row the steps derive), merges,
 * packs and writes them back in one transaction under the user's lock —, and (b) by a user
 * whose steps five apps subscribe to, against a user nobody subscribes to; then (c) how fast one
 * Stride process delivers a backlog of messages to a local receiver.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { openDatabase } from '../src/db/database.js';
import { seriesChange } from '../src/domain/minute-samples.js';
import { createStores, type Stores } from '../src/store/stores.js';
import { fixedRequestWorkload, inProcessWorkload, interleave, type LoadSettings, type Measurement } from './lib/loads.js';
import { obtainTokens } from './lib/oauth-client.js';
import { REDIRECT_URI, STRIDE_CLI, STRIDE_ENDPOINTS, strideEnv, startStride } from './lib/servers.js';
import { stopServer } from './lib/processes.js';

const run = promisify(execFile);
const MINUTES_PER_DAY = 1440;
const LISTENERS = 5;
/** Messages queued for the delivery measurement (c). */
const BACKLOG = 10_000;

export interface WebhookLoadResult {
  limit: Measurement;
  quiet: Measurement;
  watched: Measurement;
  deliveries: { messages: number; seconds: number; rate: number };
  samplesPerUpload: number;
}

/** A receiver that answers every message at once (and echoes verification challenges). */
async function startCountingReceiver(): Promise<{ url: string; count: () => number; server: Server }> {
  let received = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const payload = JSON.parse(body) as { type: string; data: { challenge?: string } };
      if (payload.type === 'webhook.verification') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: payload.data.challenge }));
        return;
      }
      received++;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, count: () => received, server };
}

/** `nodeFlags`: for the Stride process (BENCH_CPU_PROF's --cpu-prof). */
export async function webhookLoads(databaseUrl: string, settings: LoadSettings, connections: number, log: (line: string) => void, nodeFlags: string[] = []): Promise<WebhookLoadResult> {
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true' };
  const cli = async <T>(args: string[]): Promise<T> => {
    const { stdout } = await run(process.execPath, [STRIDE_CLI, ...args, '--json'], { env: { ...strideEnv(databaseUrl), ...env }, timeout: 60_000 });
    return JSON.parse(stdout) as T;
  };
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const users = ['quiet', 'watched', 'limit'].map((name) => ({ username: `${name}@example.com`, password }));
  for (const user of users) await cli(['users', 'create', '--email', user.username, '--password', password]);
  const newApp = (name: string, scopes: string) =>
    cli<{ client_id: string; client_secret: string }>(['apps', 'create', '--owner', users[0]!.username, '--name', name, '--redirect-uri', REDIRECT_URI, '--scopes', scopes]);
  const uploader = await newApp('Uploader', 'write_activity');
  const listeners = [];
  for (let i = 0; i < LISTENERS; i++) listeners.push(await newApp(`Listener ${i + 1}`, 'read_activity'));

  const receiver = await startCountingReceiver();
  const server = await startStride(databaseUrl, 'Stride SQLite (webhooks)', { env, nodeFlags });
  const db = openDatabase(databaseUrl);
  const stores: Stores = createStores(db);
  try {
    const endpoints = STRIDE_ENDPOINTS(server.origin);
    const credentials = (app: { client_id: string; client_secret: string }) => ({ clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI });
    const [quietToken] = await obtainTokens(server.origin, endpoints, credentials(uploader), users[0]!, { scope: 'write_activity' }, 1);
    const [watchedToken] = await obtainTokens(server.origin, endpoints, credentials(uploader), users[1]!, { scope: 'write_activity' }, 1);
    const endpointIds: string[] = [];
    for (const listener of listeners) {
      await obtainTokens(server.origin, endpoints, credentials(listener), users[1]!, { scope: 'read_activity' }, 1);
      endpointIds.push((await cli<{ id: string }>(['webhooks', 'add', listener.client_id, '--url', receiver.url, '--events', 'steps.updated'])).id);
    }
    for (let waited = 0; (await Promise.all(endpointIds.map((id) => stores.webhooks.find(id)))).some((e) => e?.state !== 'active'); waited++) {
      if (waited > 200) throw new Error('the bench endpoints were not verified');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const day = Math.floor(Date.now() / 1000 / 86400) * 86400 - 86400;
    const samples = Array.from({ length: MINUTES_PER_DAY }, (_, i) => ({ start_time: day + i * 60, value: (i * 37) % 120 }));
    const body = JSON.stringify({ samples });
    const limitUser = (await stores.users.findByEmail(users[2]!.username))!;
    // What the route does after its checks (api/sum-metrics.ts `upload`): the same call, with the
    // change of the same minutes in the user's zone and the default coalescing window.
    const upsert = () => stores.steps.upsertSamples(limitUser.id, samples, seriesChange(samples.map((s) => s.start_time), 'UTC', Math.floor(Date.now() / 1000), 30));
    const url = `${server.origin}/v1/users/me/activities/steps`;
    const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    log('load 6: uploads of one day of minutes, against the bare upserts and with five subscribed apps…');
    const [limit, quiet, watched] = await interleave(
      [
        inProcessWorkload(upsert),
        fixedRequestWorkload(url, headers(quietToken!.access_token), connections, server.pid, body),
        fixedRequestWorkload(url, headers(watchedToken!.access_token), connections, server.pid, body),
      ],
      settings,
    );

    log(`load 6: delivering a backlog of ${BACKLOG} messages to a local receiver…`);
    for (const id of endpointIds) await stores.webhooks.update(id, { state: 'paused' }, Math.floor(Date.now() / 1000));
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < BACKLOG; i++) await stores.webhooks.sendTest(endpointIds[i % LISTENERS]!, now);
    const before = receiver.count();
    const started = performance.now();
    for (const id of endpointIds) await stores.webhooks.update(id, { state: 'active' }, now);
    while (receiver.count() - before < BACKLOG) {
      if (performance.now() - started > 120_000) throw new Error(`only ${receiver.count() - before} of ${BACKLOG} messages delivered in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const seconds = (performance.now() - started) / 1000;
    return { limit: limit!, quiet: quiet!, watched: watched!, deliveries: { messages: BACKLOG, seconds, rate: BACKLOG / seconds }, samplesPerUpload: MINUTES_PER_DAY };
  } finally {
    await stopServer(server);
    await db.close();
    receiver.server.close();
  }
}
