import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TRUST_EVERY_PROXY } from '../src/server.js';
import { CLI_PATH, freePort, runCli, startServer } from './support/cli.js';
import { createTestDatabase, forEachDialect } from './support/databases.js';

forEachDialect('stride serve', (dialect) => {
  it('creates its schema on first start, serves /readyz and stops on SIGTERM', async () => {
    const database = await createTestDatabase(dialect, { migrate: false });
    let url = database.url;
    if (dialect === 'sqlite') url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'stride-serve-')), 'nested', 'stride.sqlite')}`;
    const port = await freePort();
    const server = await startServer(port, { DATABASE_URL: url });
    try {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready' });
      const missing = await fetch(`http://127.0.0.1:${port}/nothing-here`);
      assert.equal(missing.status, 404);
    } finally {
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      server.kill('SIGTERM');
      assert.equal(await exited, 0);
      await database.drop();
    }
  });
});

/**
 * One server for what it says on stdout: the warning at its start and a request's log line (a
 * `stride serve` costs a couple of seconds of CPU to start; these two need nothing else of it).
 */
describe('stride serve at LOG_LEVEL=info with TRUST_PROXY=true', () => {
  let server: ChildProcess;
  let port: number;
  let stdout = '';
  before(async () => {
    port = await freePort();
    const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'stride-log-')), 'stride.sqlite')}`;
    server = spawn(process.execPath, [CLI_PATH, 'serve'], {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), TRUST_PROXY: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (chunk) => (stdout += chunk));
    const deadline = Date.now() + 20_000;
    while (!stdout.includes('Stride is serving') && server.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  });
  after(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
  });

  it('warns at start that TRUST_PROXY=true lets clients choose their own address', () => {
    const warnings = stdout.split('\n').filter((line) => line.includes('TRUST_PROXY=true')).map((line) => JSON.parse(line) as { level: number; msg: string });
    assert.deepEqual(warnings.map(({ level, msg }) => ({ level, msg })), [{ level: 40, msg: TRUST_EVERY_PROXY }], stdout);
  });

  it('logs one JSON line per request at info, with its request id and without codes or tokens', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/nothing-here?code=sac_secret&state=s1`, { headers: { authorization: 'Bearer sat_secret' } });
    assert.equal(response.status, 404);
    const requestId = response.headers.get('x-request-id')!;
    const deadline = Date.now() + 5000;
    const linesOf = () => stdout.split('\n').filter((line) => line.includes(requestId)).map((line) => JSON.parse(line) as Record<string, unknown>);
    while (linesOf().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = linesOf();
    assert.equal(lines.length, 1, `one line for the request: ${JSON.stringify(lines)}`);
    assert.equal(lines[0]!.msg, 'request completed');
    assert.equal(lines[0]!.reqId, requestId);
    assert.equal(lines[0]!.status, 404);
    assert.match(JSON.stringify(lines[0]), /code=\[redacted\]&state=s1/);
    assert.doesNotMatch(stdout, /sac_secret|sat_secret/);
  });

  it('stops on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});

it('refuses to start with a bad setting, naming it in one line', async () => {
  const run = await runCli(['serve'], { PORT: 'abc' });
  assert.equal(run.code, 1);
  assert.equal(run.stderr, 'stride: PORT must be a whole number, got "abc"\n');
});
