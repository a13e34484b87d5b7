/**
 * Load 15 of `npm run bench` (docs/decisions/0031-stride-changes.md): a change of the stride length
 * by people whose steps lie on 20,160 scattered days (two uploads within the documented limits),
 * against Stride of its own on a fresh database. For each person, one `PUT /v1/users/me` with a new
 * `stride_length_cm` while a client asks `GET /healthz` one request after another, until the
 * recomputation of every day is done (its `distance.updated` is in the database): the answer's
 * time, `/healthz`'s times meanwhile, and how long the whole recomputation took.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { openDatabase } from '../src/db/database.js';
import { storedEvents } from '../src/store/event-feed.js';
import type { Measurement } from './lib/loads.js';
import { obtainTokens } from './lib/oauth-client.js';
import { REDIRECT_URI, STRIDE_ENDPOINTS, cli, startStride } from './lib/servers.js';
import { stopServer } from './lib/processes.js';

const PEOPLE = 3;
const DAYS = 20_160;
/** The most samples one upload takes. */
const UPLOAD = 10_080;

export interface StrideChangeResult {
  /** The PUT's answer times, ms. */
  answers: Measurement;
  /** /healthz while the recomputations ran, ms. */
  health: Measurement;
  /** From the PUT to the event, per person, s. */
  recomputeSeconds: number[];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

function timing(samples: number[], seconds: number, note: string): Measurement {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    rate: sorted[sorted.length - 1]!,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok: samples.length,
    failed: 0,
    seconds,
    rssMb: null,
    cpu: { serverLoopUs: null, serverThreadsUs: null, driverUs: NaN },
    note,
  };
}

async function timed(url: string, init: Parameters<typeof request>[1] = {}): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const response = await request(url, init);
  const body = await response.body.text();
  return { ms: performance.now() - started, status: response.statusCode, body };
}

export async function strideChangeLoad(databaseUrl: string, label: string, log: (line: string) => void): Promise<StrideChangeResult> {
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const people = Array.from({ length: PEOPLE }, (_, i) => ({ username: `walker${i}@example.com`, password }));
  for (const person of people) await cli(databaseUrl, ['users', 'create', '--email', person.username, '--password', password]);
  const app = await cli<{ client_id: string; client_secret: string }>(databaseUrl, [
    'apps', 'create', '--owner', people[0]!.username, '--name', 'Stride change bench', '--redirect-uri', REDIRECT_URI, '--scopes', 'read_activity,write_activity,write_profile',
  ]);
  const server = await startStride(databaseUrl, `${label} (stride change)`);
  const db = openDatabase(databaseUrl);
  try {
    const client = { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI };
    const answers: number[] = [];
    const health: number[] = [];
    const recomputeSeconds: number[] = [];
    const today = Math.floor(Date.now() / 1000 / 86400) * 86400;
    let measured = 0;
    for (const person of people) {
      const [tokens] = await obtainTokens(server.origin, STRIDE_ENDPOINTS(server.origin), client, person, { scope: 'read_activity write_activity write_profile' }, 1);
      const headers = { authorization: `Bearer ${tokens!.access_token}`, 'content-type': 'application/json' };
      log(`load 15: ${person.username}: steps on ${DAYS} scattered days…`);
      for (let first = 0; first < DAYS; first += UPLOAD) {
        const samples = Array.from({ length: Math.min(UPLOAD, DAYS - first) }, (_, i) => ({ start_time: today - (first + i + 1) * 86_400 + 12 * 3600, value: 40 + ((first + i) % 60) }));
        const upload = await timed(`${server.origin}/v1/users/me/activities/steps`, { method: 'POST', headers, body: JSON.stringify({ samples }) });
        if (upload.status !== 200) throw new Error(`upload answered ${upload.status}: ${upload.body}`);
      }
      const user = await db.kysely.selectFrom('users').select('id').where('email', '=', person.username).executeTakeFirstOrThrow();
      const done = async () =>
        (await storedEvents(db.kysely, { userId: user.id, type: 'distance.updated' })).some((event) => event.data.cause === 'stride_length');
      let polling = true;
      const poller = (async () => {
        while (polling) health.push((await timed(`${server.origin}/healthz`)).ms);
      })();
      const started = performance.now();
      const put = await timed(`${server.origin}/v1/users/me`, { method: 'PUT', headers, body: JSON.stringify({ stride_length_cm: 90 }) });
      if (put.status !== 200) throw new Error(`the stride change answered ${put.status}: ${put.body}`);
      answers.push(put.ms);
      while (!(await done())) {
        if (performance.now() - started > 120_000) throw new Error('the recomputation did not end within 120 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      recomputeSeconds.push((performance.now() - started) / 1000);
      polling = false;
      await poller;
      measured += (performance.now() - started) / 1000;
    }
    const seconds = recomputeSeconds.map((s) => s.toFixed(2)).join(', ');
    return {
      answers: timing(answers, measured, `${PEOPLE} people with steps on ${DAYS} days; ms of each PUT (rate column: the slowest); every day recomputed after ${seconds} s`),
      health: timing(health, measured, `GET /healthz one after another while the recomputations ran (rate column: the slowest, ms)`),
      recomputeSeconds,
    };
  } finally {
    await stopServer(server);
    await db.close();
  }
}
