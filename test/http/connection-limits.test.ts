/**
 * Slow and numerous clients against a real `stride serve`: a request whose headers or body
 * trickle in is closed once REQUEST_TIMEOUT is over (with a 408 in the error shape), the server
 * keeps answering while many such clients hang on, and connections over MAX_CONNECTIONS are closed
 * at once without taking the process down.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startServer } from '../support/cli.js';

interface Client {
  socket: Socket;
  /** Everything the server sent. */
  received(): string;
  /** Resolves with the milliseconds from connection to close. */
  closed: Promise<number>;
}

/** Every socket a test opened, destroyed after each suite whatever its assertions did. */
const opened: Socket[] = [];

function destroyAll(): void {
  for (const socket of opened.splice(0)) socket.destroy();
}

/** Connects, sends `head`, then sends `drip` every `everyMs` until the server closes the connection. */
function slowClient(port: number, head: string, drip = '', everyMs = 100): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    opened.push(socket);
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const started = Date.now();
    const closed = new Promise<number>((resolveClosed) => {
      socket.on('close', () => {
        clearInterval(timer);
        resolveClosed(Date.now() - started);
      });
    });
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined); // a reset counts as closed
    socket.once('connect', () => {
      socket.write(head);
      if (drip !== '') timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
      resolve({ socket, received: () => received, closed });
    });
    socket.once('error', reject);
  });
}

const SLOW_BODY_HEAD =
  'POST /oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n';
const SLOW_HEADERS_HEAD = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n';

/** The milliseconds until `client` was closed, or Infinity if it is still open after `limitMs`. */
function closedWithin(client: Client, limitMs: number): Promise<number> {
  return Promise.race([client.closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), limitMs).unref())]);
}

async function healthz(port: number): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
  await response.arrayBuffer();
  return { status: response.status, ms: Date.now() - started };
}

function stop(server: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => {
    if (server.exitCode !== null) return resolve(server.exitCode);
    server.once('exit', resolve);
    server.kill('SIGTERM');
  });
}

function sqliteUrl(): string {
  return `sqlite:${join(mkdtempSync(join(tmpdir(), 'stride-slow-')), 'stride.sqlite')}`;
}

describe('slow clients (REQUEST_TIMEOUT=1)', () => {
  let port: number;
  let server: ChildProcess;
  before(async () => {
    port = await freePort();
    server = await startServer(port, { DATABASE_URL: sqliteUrl(), RATE_LIMIT: 'off', REQUEST_TIMEOUT: '1' });
  });
  after(() => {
    destroyAll();
    return stop(server);
  });

  it('closes a request whose body trickles in, once the timeout is over, with a 408 in the error shape', async () => {
    // A byte every 100 ms: never idle, so only the whole-request timeout can end it.
    const client = await slowClient(port, SLOW_BODY_HEAD, 'a');
    const ms = await closedWithin(client, 5000);
    assert.ok(ms >= 900 && ms < 3000, `closed after ${ms} ms`);
    const answer = client.received();
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.equal(body.error, 'invalid_request');
    assert.match(body.error_description, /within 1 s/);
  });

  it('closes a request whose headers trickle in', async () => {
    const client = await slowClient(port, SLOW_HEADERS_HEAD, 'X-Slow: 1\r\n');
    const ms = await closedWithin(client, 5000);
    assert.ok(ms >= 900 && ms < 3000, `closed after ${ms} ms`);
    assert.match(client.received(), /^HTTP\/1\.1 408 /);
  });

  it('keeps answering /healthz while 200 slow clients hang on, then closes them all', async () => {
    const clients = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? slowClient(port, SLOW_BODY_HEAD, 'a', 200) : slowClient(port, SLOW_HEADERS_HEAD, 'X-Slow: 1\r\n', 200))),
    );
    for (let i = 0; i < 3; i++) {
      const { status, ms } = await healthz(port);
      assert.equal(status, 200);
      assert.ok(ms < 1000, `/healthz took ${ms} ms`);
    }
    const closedAfter = await Promise.all(clients.map((client) => closedWithin(client, 5000)));
    assert.ok(Math.max(...closedAfter) < 4000, `the last slow client was closed after ${Math.max(...closedAfter)} ms`);
    assert.equal((await healthz(port)).status, 200);
  });
});

describe('connection cap (MAX_CONNECTIONS=20)', () => {
  let port: number;
  let server: ChildProcess;
  before(async () => {
    port = await freePort();
    server = await startServer(port, { DATABASE_URL: sqliteUrl(), RATE_LIMIT: 'off', REQUEST_TIMEOUT: '2', MAX_CONNECTIONS: '20' });
  });
  after(() => {
    destroyAll();
    return stop(server);
  });

  it('closes connections over the cap at once, stays up, and answers again when they are gone', async () => {
    const clients: Client[] = [];
    for (let i = 0; i < 30; i++) clients.push(await slowClient(port, SLOW_HEADERS_HEAD));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const dropped = clients.filter((client) => client.socket.destroyed || client.socket.readableEnded);
    const held = clients.length - dropped.length;
    assert.ok(held <= 20, `${held} connections held open`);
    assert.ok(dropped.length >= 10, `${dropped.length} connections dropped`);
    for (const client of dropped) assert.equal(client.received(), '', 'dropped before any answer');
    assert.equal(server.exitCode, null, 'the server is still running');
    // The held ones are slow clients: REQUEST_TIMEOUT frees their places without anyone's help.
    const closedAfter = await Promise.all(clients.map((client) => closedWithin(client, 6000)));
    assert.ok(closedAfter.every((ms) => ms < 6000), 'every held connection closed by the server');
    assert.equal((await healthz(port)).status, 200);
  });
});
