/**
 * @stride/client against a real `stride serve` process, on SQLite and on PostgreSQL: the code flow
 * from the authorization URL to tokens (the consent driven over HTTP as a browser would), typed
 * reads and uploads, refresh under rotation counted at the server (/metrics), typed errors, waiting
 * on 429, the event feed across pages, and the verification of a real webhook delivery.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { after, before, it } from 'node:test';
import { createStride, StrideError, verifyWebhook, type PersonClient, type Stride, type Tokens } from '@stride/client';
import { registerApp } from '../../src/domain/apps.js';
import type { WebhookEndpoint } from '../../src/store/webhooks.js';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import { authorizeAndAllow, Browser, createFixture, signIn, type Fixture } from '../oauth/flow.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { freePort, startServer } from '../support/cli.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

cheapPasswordHashing();

const REDIRECT_URI = 'https://client.example/callback';
const PUBLIC_REDIRECT_URI = 'com.example.walker:/cb';
const METRICS_TOKEN = 'client-test-metrics';
/** The API's limit is per grant: high enough for the confidential app's grant, reached on purpose by the public app's. */
const API_LIMIT_PER_SECOND = 40;

/** POST /oauth2/token answers the server has counted, by status. */
async function tokenRequests(baseUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^stride_http_request_duration_seconds_count\{([^}]*)\} (\d+)$/gm)) {
    const labels = match[1]!;
    if (!labels.includes('route="/oauth2/token"') || !labels.includes('method="POST"')) continue;
    const status = /status="(\d+)"/.exec(labels)![1]!;
    counts[status] = (counts[status] ?? 0) + Number(match[2]);
  }
  return counts;
}

function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** A proxy in front of the server that forwards every request and, when told, drops the next token answer after the server sent it. */
async function startLossyProxy(target: string): Promise<{ url: string; dropNextTokenAnswer(): void; close(): Promise<void> }> {
  let drop = false;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', async () => {
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length').map(([k, v]) => [k, String(v)]));
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(`${target}${request.url}`, { method: request.method, headers, body });
      const text = await answer.text();
      if (drop && request.url === '/oauth2/token') {
        drop = false;
        request.socket.destroy(); // the server has rotated the token; its answer never reaches the client
        return;
      }
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    dropNextTokenAnswer: () => {
      drop = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

forEachDialect('@stride/client against stride serve', (dialect) => {
  let t: TestApp;
  let fixture: Fixture;
  let server: ChildProcess;
  let baseUrl: string;
  let receiver: Receiver;
  let endpoint: WebhookEndpoint;
  let app: { clientId: string; clientSecret: string };
  let stride: Stride;
  let browser: Browser;
  let tokens: Tokens;
  let person: PersonClient;
  const day = Math.floor(Date.now() / 86_400_000) * 86400 - 86400;

  before(async () => {
    const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_COALESCE: '0' };
    t = await createTestApp(dialect, env);
    fixture = await createFixture(t);
    const registered = await registerApp(t.database.stores.apps, t.clock, fixture.developer.id, {
      name: 'Heart Coach',
      redirectUris: [REDIRECT_URI],
      scopes: ['read_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate'],
      isPublic: false,
    });
    app = { clientId: registered.app.clientId, clientSecret: registered.clientSecret! };
    receiver = await startReceiver();
    endpoint = await addEndpoint(t.database.stores.webhooks, t.config, registered.app.id, { url: receiver.url, events: ['steps.updated'] }, t.clock());
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = await startServer(port, {
      ...env,
      DATABASE_URL: t.database.url,
      PUBLIC_URL: baseUrl,
      METRICS_TOKEN,
      RATE_LIMIT: 'on',
      RATE_LIMIT_API: `${API_LIMIT_PER_SECOND}/s`,
    });
    stride = createStride({ baseUrl, ...app });
    browser = new Browser(null, baseUrl);
    assert.equal((await signIn(browser, fixture.user.email, fixture.password)).status, 303);
  });

  /** A client of the same app whose every request's path and Authorization header are recorded as sent. */
  function recordingClient() {
    const sent: Array<{ path: string; authorization: string | null }> = [];
    const recorder: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      sent.push({ path: new URL(request.url).pathname, authorization: request.headers.get('authorization') });
      return fetch(input, init);
    };
    return { client: createStride({ baseUrl, ...app, fetch: recorder }), sent };
  }

  after(async () => {
    await stride?.close();
    server?.kill('SIGKILL');
    await receiver?.close();
    await t?.close();
  });

  it('goes from the authorization URL (PKCE S256, state) to tokens, and reads the profile', async () => {
    const request = await stride.authorizationUrl({ redirectUri: REDIRECT_URI, scope: ['read_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate'] });
    const url = new URL(request.url);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('state'), request.state);
    const callback = await authorizeAndAllow(browser, request.url);

    // A callback that answers another request, or comes from another server, is refused before any exchange.
    await assert.rejects(stride.handleCallback(callback, { ...request, state: 'someone-else', redirectUri: REDIRECT_URI }), { name: 'StrideError', error: 'invalid_state' });
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'https://evil.example');
    await assert.rejects(stride.handleCallback(forged, { ...request, redirectUri: REDIRECT_URI }), { error: 'invalid_issuer' });
    forged.searchParams.delete('iss');
    await assert.rejects(stride.handleCallback(forged, { ...request, redirectUri: REDIRECT_URI }), { error: 'invalid_issuer', message: /names no issuer/ });
    const tokensBefore = total(await tokenRequests(baseUrl));
    tokens = await stride.handleCallback(callback, { ...request, redirectUri: REDIRECT_URI });
    assert.equal(total(await tokenRequests(baseUrl)), tokensBefore + 1);
    assert.match(tokens.accessToken, /^sat_/);
    assert.match(tokens.refreshToken!, /^srt_/);
    assert.ok(tokens.expiresAt > Date.now() / 1000 + 3600);
    assert.deepEqual(tokens.scope, ['read_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate']);

    person = stride.person(tokens);
    const me = await person.get('/v1/users/me');
    assert.equal(me.display_name, 'Walker');
    assert.equal(me.id, fixture.user.id);
  });

  it('uploads and reads steps and heart rate with typed bodies and queries', async () => {
    const first = await person.post('/v1/users/me/activities/steps/', { body: { samples: [{ start_time: day + 600, value: 120 }, { start_time: day + 660, value: 80 }] } });
    assert.deepEqual(first, { accepted: 2 });
    await person.post('/v1/users/me/activities/steps/', { body: { samples: [{ start_time: day + 3600, value: 55 }] } });
    await person.post('/v1/users/me/heartrate/', { body: { samples: [{ time: day + 600, bpm: 70 }, { time: day + 610, bpm: 80 }] } });
    const query = { start_time: day, end_time: day + 86400, granularity: 'hour' as const, timezone: 'UTC' };
    const steps = await person.get('/v1/users/me/activities/steps/', { params: { query } });
    assert.equal(steps.total, 255);
    assert.equal(steps.steps.length, 24);
    assert.deepEqual(steps.steps.slice(0, 2).map((bucket) => bucket.value), [200, 55]);
    const heart = await person.get('/v1/users/me/heartrate/', { params: { query } });
    assert.deepEqual({ ...heart.heartrate[0] }, { start_time: day, end_time: day + 3600, avg: 75, min: 70, max: 80, minutes: 1 });
  });

  it('ten concurrent calls with an expired access token make one refresh, stored before it is used', async () => {
    const before = await tokenRequests(baseUrl);
    const stored: Tokens[] = [];
    let usedBeforeStored = false;
    // The server still takes the old token (it is expired only in the client's eyes): what proves
    // the refresh is used is the Authorization header of each request actually sent.
    const { client: recording, sent } = recordingClient();
    const expired = recording.person({ ...tokens, expiresAt: Math.floor(Date.now() / 1000) - 1 }, {
      onTokens: async (fresh) => {
        await new Promise((resolve) => setImmediate(resolve));
        usedBeforeStored ||= expired.tokens.accessToken === fresh.accessToken;
        stored.push(fresh);
      },
    });
    const answers = await Promise.all(Array.from({ length: 10 }, () => expired.get('/v1/users/me')));
    assert.ok(answers.every((me) => me.id === fixture.user.id));
    const afterCounts = await tokenRequests(baseUrl);
    assert.equal(total(afterCounts) - total(before), 1, 'exactly one refresh request');
    assert.equal((afterCounts['200'] ?? 0) - (before['200'] ?? 0), 1);
    assert.equal(stored.length, 1);
    assert.equal(usedBeforeStored, false);
    assert.notEqual(stored[0]!.refreshToken, tokens.refreshToken, 'rotated');
    assert.equal(expired.tokens.accessToken, stored[0]!.accessToken);
    const reads = sent.filter((request) => request.path === '/v1/users/me');
    assert.equal(reads.length, 10);
    assert.deepEqual(new Set(reads.map((request) => request.authorization)), new Set([`Bearer ${stored[0]!.accessToken}`]), 'every call sent the refreshed token');
    assert.equal(sent.filter((request) => request.path === '/oauth2/token').length, 1);
    await recording.close();
    tokens = stored[0]!;
  });

  it('ten concurrent calls refused with invalid_token make one refresh, then all succeed', async () => {
    // The access token is revoked (RFC 7009: that token alone); the client learns it from the 401s.
    const revoked = await fetch(`${baseUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${app.clientId}:${app.clientSecret}`)}` },
      body: new URLSearchParams({ token: tokens.accessToken, token_type_hint: 'access_token' }),
    });
    assert.equal(revoked.status, 200);
    const before = total(await tokenRequests(baseUrl));
    const stored: Tokens[] = [];
    const { client: recording, sent } = recordingClient();
    const refused = recording.person(tokens, { onTokens: (fresh) => void stored.push(fresh) });
    const answers = await Promise.all(Array.from({ length: 10 }, () => refused.get('/v1/users/me')));
    assert.ok(answers.every((me) => me.display_name === 'Walker'));
    assert.equal(total(await tokenRequests(baseUrl)) - before, 1, 'exactly one refresh request');
    assert.equal(stored.length, 1);
    // Ten with the revoked token, then each once again with the refreshed one.
    const reads = sent.filter((request) => request.path === '/v1/users/me').map((request) => request.authorization);
    assert.equal(reads.filter((header) => header === `Bearer ${tokens.accessToken}`).length, 10, 'ten sent with the revoked token');
    assert.equal(reads.filter((header) => header === `Bearer ${stored[0]!.accessToken}`).length, 10, 'ten sent again with the refreshed token');
    assert.equal(reads.length, 20);
    await recording.close();
    tokens = stored[0]!;
  });

  it('keeps the old tokens when storing the new ones fails, and the next call gets the same pair again', async () => {
    const before = await tokenRequests(baseUrl);
    const offered: Tokens[] = [];
    const flaky = stride.person({ ...tokens, expiresAt: 0 }, {
      onTokens: (fresh) => {
        offered.push(fresh);
        if (offered.length === 1) throw new Error('the database of the app is away');
      },
    });
    await assert.rejects(flaky.get('/v1/users/me'), /the database of the app is away/);
    assert.equal(flaky.tokens.refreshToken, tokens.refreshToken, 'nothing unstored is used');
    assert.equal((await flaky.get('/v1/users/me')).id, fixture.user.id);
    assert.equal(offered.length, 2);
    assert.deepEqual(offered[1], { ...offered[0]!, expiresAt: offered[1]!.expiresAt }, 'the replay window answered the same pair');
    const afterCounts = await tokenRequests(baseUrl);
    assert.equal((afterCounts['200'] ?? 0) - (before['200'] ?? 0), 2);
    tokens = offered[1]!;
  });

  it('sends a refresh whose answer was lost again, and the replay window gives the same tokens', async () => {
    const proxy = await startLossyProxy(baseUrl);
    try {
      const viaProxy = createStride({ baseUrl: proxy.url, ...app });
      const before = await tokenRequests(baseUrl);
      proxy.dropNextTokenAnswer();
      const fresh = await viaProxy.refresh(tokens.refreshToken!);
      const afterCounts = await tokenRequests(baseUrl);
      assert.equal((afterCounts['200'] ?? 0) - (before['200'] ?? 0), 2, 'the rotation, then the replay of its answer');
      const me = await stride.person(fresh).get('/v1/users/me');
      assert.equal(me.id, fixture.user.id);
      // The grant is intact: the chain goes on from the tokens of the lost answer.
      tokens = await stride.refresh(fresh.refreshToken!);
      assert.equal((await stride.person(tokens).get('/v1/users/me')).id, fixture.user.id);
    } finally {
      await proxy.close();
    }
  });

  it('throws typed errors: 401, 403, 400, invalid_grant and invalid_client', async () => {
    const unknown = stride.person({ accessToken: 'sat_not-a-token', expiresAt: Math.floor(Date.now() / 1000) + 3600, scope: [], tokenType: 'Bearer' });
    await assert.rejects(unknown.get('/v1/users/me'), (error: unknown) => {
      assert.ok(error instanceof StrideError);
      assert.equal(error.status, 401);
      assert.equal(error.error, 'invalid_token');
      assert.ok(error.errorDescription);
      return true;
    });
    await assert.rejects(stride.refresh('srt_not-a-token'), { name: 'StrideError', status: 400, error: 'invalid_grant' });
    const wrongSecret = createStride({ baseUrl, clientId: app.clientId, clientSecret: 'wrong' });
    await assert.rejects(wrongSecret.events().next(), { status: 401, error: 'invalid_client' });
    await assert.rejects(
      person.get('/v1/users/me/activities/steps/', { params: { query: { start_time: 2000, end_time: 1000 } } }),
      (error: StrideError) => error.status === 400 && error.error === 'invalid_request' && /end_time 1000 is before start_time 2000/.test(error.errorDescription ?? ''),
    );
    await assert.rejects(person.post('/v1/users/me/heartrate/', { body: { samples: [{ time: day, bpm: 400 }] } }), (error: StrideError) => error.status === 400 && /bpm/.test(error.errorDescription ?? ''));

    // A public app (PKCE alone, no secret) whose grant lacks read_heartrate: 403 insufficient_scope.
    const pocket = createStride({ baseUrl, clientId: fixture.publicApp.clientId });
    const request = await pocket.authorizationUrl({ redirectUri: PUBLIC_REDIRECT_URI, scope: ['read_profile'] });
    const pocketTokens = await pocket.handleCallback(await authorizeAndAllow(browser, request.url), { ...request, redirectUri: PUBLIC_REDIRECT_URI });
    await assert.rejects(pocket.person(pocketTokens).get('/v1/users/me/heartrate/'), { status: 403, error: 'insufficient_scope' });
  });

  // The limits are counted in the server's memory, the same whatever the database: once is enough,
  // so the test is registered on SQLite only (a skip would fail CI's run).
  if (dialect === 'sqlite') it('waits out a 429 when asked (Retry-After), and otherwise throws it with retryAfter', async () => {
    const pocket = createStride({ baseUrl, clientId: fixture.publicApp.clientId });
    const request = await pocket.authorizationUrl({ redirectUri: PUBLIC_REDIRECT_URI, scope: ['read_profile'] });
    const grant = await pocket.handleCallback(await authorizeAndAllow(browser, request.url), { ...request, redirectUri: PUBLIC_REDIRECT_URI });
    const statuses: number[] = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const patient = createStride({ baseUrl, clientId: fixture.publicApp.clientId, retry: { rateLimited: true, maxWaitSeconds: 5 }, fetch: recording }).person(grant);
    // Twice the limit at once: some are over it whatever the phase of the window.
    const burst = (client: PersonClient) => Promise.allSettled(Array.from({ length: API_LIMIT_PER_SECOND * 2 }, () => client.get('/v1/users/me')));
    const impatientAnswers = await burst(pocket.person(grant));
    const refused = impatientAnswers.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    assert.ok(refused.length > 0, 'the limit was reached');
    for (const error of refused) {
      assert.ok(error instanceof StrideError);
      assert.equal(error.status, 429);
      assert.equal(error.error, 'rate_limited');
      assert.ok(error.retryAfter !== undefined && error.retryAfter >= 1 && error.retryAfter <= 2, `retryAfter ${error.retryAfter}`);
    }
    // The same with a client that waits: every call is answered, some after a 429 and its wait.
    const patientAnswers = await burst(patient);
    assert.deepEqual(new Set(patientAnswers.map((result) => result.status)), new Set(['fulfilled']));
    assert.ok(statuses.includes(429), 'some calls met the limit, waited, and were answered');
    assert.equal(statuses.filter((status) => status === 200).length, API_LIMIT_PER_SECOND * 2);
  });

  it('reads the event feed across pages, and resumes from a cursor', async () => {
    // On PostgreSQL the feed stops before any transaction still open on the whole server
    // (docs/webhooks.md, "The feed"): another test's transaction on the same server can hold the
    // three uploads' events back for a moment.
    const deadline = Date.now() + 15_000;
    for (let seen = 0; seen < 3 && Date.now() < deadline; ) {
      seen = 0;
      for await (const _ of stride.events()) seen++;
      if (seen < 3) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pages = [];
    for await (const page of stride.eventPages({ limit: 1 })) pages.push(page);
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    assert.ok(pages.every((page) => page.events.length === 1));
    const all = [];
    for await (const event of stride.events()) all.push(event);
    assert.deepEqual(all.map((event) => event.id), pages.map((page) => page.events[0]!.id));
    const stepsEvents = all.filter((event) => event.type === 'steps.updated');
    assert.equal(stepsEvents.length, 2, 'the two steps uploads');
    assert.deepEqual(stepsEvents.map((event) => (event.data as { user_id?: unknown }).user_id), [fixture.user.id, fixture.user.id], 'of the person who uploaded');
    const rest = [];
    for await (const event of stride.events({ after: pages[0]!.cursor, limit: 2 })) rest.push(event.id);
    assert.deepEqual(rest, all.slice(1).map((event) => event.id));
    for await (const _ of stride.events({ after: pages.at(-1)!.cursor })) assert.fail('nothing after the last cursor');
  });

  it('verifies a real delivery from the server and refuses a tampered or wrongly signed one', async () => {
    const [delivered] = await receiver.waitFor('steps.updated', 1, 15_000);
    const message = verifyWebhook(endpoint.secret, delivered!.body, delivered!.headers);
    assert.equal(message.type, 'steps.updated');
    assert.deepEqual(message, { id: delivered!.headers['webhook-id'], ...JSON.parse(delivered!.body) });
    assert.match(message.id, /^msg_/);
    const tampered = delivered!.body.replace(/"start_time":(\d)/, (_, digit) => `"start_time":${(Number(digit) + 1) % 10}`);
    assert.notEqual(tampered, delivered!.body);
    assert.throws(() => verifyWebhook(endpoint.secret, tampered, delivered!.headers), { name: 'StrideError', error: 'invalid_signature' });
    assert.throws(() => verifyWebhook(`whsec_${btoa('another secret of 32 bytes......')}`, delivered!.body, delivered!.headers), { error: 'invalid_signature' });
    assert.throws(() => verifyWebhook(endpoint.secret, delivered!.body, { ...delivered!.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) }), {
      error: 'invalid_signature',
    });
  });
});

/**
 * Checked when this file compiles, never run: the paths, queries and bodies are those of
 * /openapi.json, so each call below is refused by the compiler (and the build fails if one is not).
 */
export function typeChecks(client: PersonClient): void {
  // @ts-expect-error not a path of the API
  void client.get('/v1/users/you');
  // @ts-expect-error granularity is minute, hour or day
  void client.get('/v1/users/me/activities/steps/', { params: { query: { granularity: 'week' } } });
  // @ts-expect-error a heart-rate reading has time and bpm
  void client.post('/v1/users/me/heartrate/', { body: { samples: [{ start_time: 0, value: 1 }] } });
  // @ts-expect-error the profile has no such field
  void client.get('/v1/users/me').then((me) => me.password);
}
