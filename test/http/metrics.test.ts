/** `/metrics` (docs/operations.md, "Metrics"): who may read it, and that it counts what happened. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { cheapPasswordHashing } from '../support/passwords.js';
import { forEachDialect } from '../support/databases.js';
import { freePort, startServer } from '../support/cli.js';
import type { TestApp } from '../support/app.js';
import { Browser, createFixture, createOAuthTestApp, exchangeCode, obtainCode, obtainTokens, refresh, signIn, tokenRequest, type Fixture } from '../oauth/flow.js';
import { createTestApp } from '../support/app.js';
import { constantTimeEqual } from '../../src/security/secrets.js';

cheapPasswordHashing();

const TOKEN = 'metrics-token-0123456789';

/** The value of the sample `name{labels}` in Prometheus text (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return 0;
}

async function scrape(t: TestApp): Promise<string> {
  const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return response.body;
}

forEachDialect('/metrics', (dialect) => {
  let t: TestApp;
  let fixture: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { METRICS_TOKEN: TOKEN });
    fixture = await createFixture(t);
  });
  after(() => t.close());

  it('is refused without the token, or with another one, as a bearer challenge', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`]) {
      const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      assert.equal(response.statusCode, 401, String(authorization));
      assert.equal(response.json().error, 'invalid_token');
      assert.match(String(response.headers['www-authenticate']), /^Bearer realm="metrics"/);
    }
  });

  it('counts requests by route template and status, never by raw path', async () => {
    const before = await scrape(t);
    const labels = { method: 'GET', route: '/oauth2/authorize', status: '400' };
    for (const id of ['a', 'b', 'c']) await t.app.inject({ method: 'GET', url: `/oauth2/authorize?client_id=${id}` });
    await t.app.inject({ method: 'GET', url: '/no/such/path/123' });
    const text = await scrape(t);
    assert.equal(sample(text, 'stride_http_request_duration_seconds_count', labels) - sample(before, 'stride_http_request_duration_seconds_count', labels), 3);
    assert.ok(sample(text, 'stride_http_request_duration_seconds_count', { route: 'unmatched', status: '404' }) >= 1);
    assert.doesNotMatch(text, /no\/such\/path/);
  });

  it('counts tokens issued, refreshed, replayed, reuse detected and revoked', async () => {
    const count = (text: string, event: string) => sample(text, 'stride_tokens_total', { event });
    const before = await scrape(t);
    const tokens = await obtainTokens(t, fixture);
    const first = await refresh(t, fixture, tokens.refresh_token);
    assert.equal(first.statusCode, 200);
    assert.equal((await refresh(t, fixture, tokens.refresh_token)).statusCode, 200, 'a retry within the window is replayed');
    t.clock.advance(t.config.refreshReplayWindow + 1);
    assert.equal((await refresh(t, fixture, tokens.refresh_token)).statusCode, 400, 'reuse after the window ends the grant');
    const other = await obtainTokens(t, fixture);
    const revoke = await t.app.inject({
      method: 'POST',
      url: '/oauth2/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: other.access_token, client_id: fixture.app.clientId, client_secret: fixture.secret }).toString(),
    });
    assert.equal(revoke.statusCode, 200);
    const text = await scrape(t);
    assert.deepEqual(
      ['issued', 'refreshed', 'replayed', 'reuse_detected', 'revoked'].map((event) => count(text, event) - count(before, event)),
      [2, 1, 1, 1, 1],
    );
  });

  it('counts sign-ins by outcome, and the time of each database call', async () => {
    const before = await scrape(t);
    assert.equal((await signIn(new Browser(t.app), fixture.user.email, 'not the password')).status, 401);
    const { code } = await obtainCode(t, fixture);
    assert.equal((await exchangeCode(t, fixture, code)).statusCode, 200);
    const text = await scrape(t);
    const signIns = (from: string, outcome: string) => sample(from, 'stride_sign_ins_total', { outcome });
    assert.equal(signIns(text, 'failed') - signIns(before, 'failed'), 1);
    assert.equal(signIns(text, 'succeeded') - signIns(before, 'succeeded'), 1);
    assert.ok(sample(text, 'stride_store_call_duration_seconds_count', { call: 'codes.redeem' }) >= 1);
    assert.ok(sample(text, 'stride_store_call_duration_seconds_count', { call: 'users.findByEmail' }) >= 2);
    // Process metrics and event-loop lag come with every scrape.
    assert.ok(sample(text, 'process_cpu_seconds_total') > 0);
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds \S+$/m);
    if (dialect === 'postgres') assert.ok(sample(text, 'stride_db_pool_connections', { state: 'total' }) >= 1);
    else assert.doesNotMatch(text, /^stride_db_pool_connections\{/m);
  });

  it('counts rate-limited answers by route', async () => {
    const limited = await createOAuthTestApp(dialect, { METRICS_TOKEN: TOKEN, RATE_LIMIT: 'on', RATE_LIMIT_TOKEN: '2/min' });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await tokenRequest(limited, { grant_type: 'client_credentials' })).statusCode);
      assert.deepEqual(statuses.slice(2), [429, 429]);
      assert.equal(sample(await scrape(limited), 'stride_rate_limited_total', { route: '/oauth2/token' }), 2);
    } finally {
      await limited.close();
    }
  });
});

it('is not served at all when neither METRICS_TOKEN nor METRICS_PORT is set', async () => {
  const t = await createTestApp('sqlite');
  try {
    const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.statusCode, 404);
  } finally {
    await t.close();
  }
});

it('METRICS_PORT serves them on loopback only, apart from the public port, with the sweeper counted', async () => {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const server = await startServer(port, { METRICS_PORT: String(metricsPort), DATABASE_URL: 'sqlite::memory:' });
  try {
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'not on the public port');
    let text = '';
    for (let tries = 0; tries < 50 && sample(text, 'stride_sweeps_total', { outcome: 'succeeded' }) === 0; tries++) {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      assert.equal(response.status, 200);
      text = await response.text();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(sample(text, 'stride_sweeps_total', { outcome: 'succeeded' }), 1, 'the sweep run at start');
    assert.match(text, /^stride_swept_rows_total\{table="access_tokens"\} 0$/m);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status, 404);
  } finally {
    server.kill('SIGTERM');
  }
});

it('refuses a token of another length, or one that differs in its last character, and accepts the token', () => {
  // The comparison /metrics makes. That it takes as long whatever the length is measured by
  // bench/constant-time.ts: a timing a loaded machine would break has no place in a test.
  const token = 't'.repeat(1000);
  assert.equal(constantTimeEqual('t'.repeat(1000), token), true);
  assert.equal(constantTimeEqual('t'.repeat(1001), token), false);
  assert.equal(constantTimeEqual('t'.repeat(999), token), false);
  assert.equal(constantTimeEqual(`${'t'.repeat(999)}u`, token), false);
  assert.equal(constantTimeEqual('', token), false);
  assert.equal(constantTimeEqual('', ''), true);
});
