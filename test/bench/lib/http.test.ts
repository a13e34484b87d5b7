import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Browser, Connection, Connections, parseForms, send, sendOnce } from '../../../bench/lib/http.js';

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** A node:http server on loopback whose answers the test sets, and the connections it saw. */
async function httpServer(handler: Handler): Promise<{ server: Server; origin: string; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => sockets.add(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

/**
 * A TCP server that answers the first request of each connection with the given pieces of bytes,
 * written one after another; `connections()` counts the connections it accepted.
 */
async function rawServer(pieces: string[], endAfter = false): Promise<{ origin: string; connections(): number; close(): void }> {
  let accepted = 0;
  const server = createTcpServer((socket) => {
    accepted++;
    socket.once('data', async () => {
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (endAfter) socket.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => accepted, close: () => server.close() };
}

describe('bench HTTP connection', () => {
  let echo: Awaited<ReturnType<typeof httpServer>>;

  before(async () => {
    echo = await httpServer((request, response, body) => {
      response.setHeader('set-cookie', ['a=1; Path=/', 'b=2; HttpOnly']);
      response.setHeader('x-seen', ['one', 'two']);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ method: request.method, url: request.url, type: request.headers['content-type'] ?? null, body }));
    });
  });
  after(() => echo.server.close());

  it('sends requests one after another on one kept-alive connection, bodies intact', async () => {
    const connections = new Connections();
    try {
      const first = await send(connections, `${echo.origin}/a?x=1`);
      const second = await send(connections, `${echo.origin}/b`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'grüße — 👣',
      });
      assert.equal(first.status, 200);
      assert.deepEqual(JSON.parse(first.body), { method: 'GET', url: '/a?x=1', type: null, body: '' });
      assert.deepEqual(JSON.parse(second.body), { method: 'POST', url: '/b', type: 'text/plain', body: 'grüße — 👣' });
      assert.equal(echo.sockets.size, 1, 'one connection for both requests');
    } finally {
      connections.close();
    }
  });

  it('keeps every Set-Cookie apart and joins other repeated headers', async () => {
    const response = await sendOnce(`${echo.origin}/`);
    assert.deepEqual(response.setCookie, ['a=1; Path=/', 'b=2; HttpOnly']);
    assert.equal(response.headers['x-seen'], 'one, two');
    assert.equal(response.headers['content-type'], 'application/json');
  });

  it('reads chunked bodies and bodies that arrive in pieces', async () => {
    const chunked = await httpServer((_request, response) => {
      response.write('first,');
      setTimeout(() => response.end('second'), 10);
    });
    const pieces = await rawServer(['HTTP/1.1 200 OK\r\nContent-Le', 'ngth: 11\r\n\r\nhello', ' world']);
    try {
      const a = await sendOnce(`${chunked.origin}/`);
      assert.equal(a.headers['transfer-encoding'], 'chunked');
      assert.equal(a.body, 'first,second');
      assert.equal((await sendOnce(`${pieces.origin}/`)).body, 'hello world');
    } finally {
      chunked.server.close();
      pieces.close();
    }
  });

  it('reads a body that ends with the connection, and reconnects for the next request', async () => {
    const raw = await rawServer(['HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil ', 'the end'], true);
    const connection = new Connection(raw.origin);
    try {
      assert.equal((await connection.request('GET', '/', {})).body, 'until the end');
      assert.equal((await connection.request('GET', '/', {})).body, 'until the end', 'a new connection for the second');
    } finally {
      connection.close();
      raw.close();
    }
  });

  it('reconnects after the server closed an idle connection or said Connection: close', async () => {
    const closing = await httpServer((request, response) => {
      if (request.url === '/close') response.setHeader('connection', 'close');
      response.end('ok');
    });
    const connections = new Connections();
    try {
      assert.equal((await send(connections, `${closing.origin}/close`)).body, 'ok');
      assert.equal((await send(connections, `${closing.origin}/`)).body, 'ok');
      // The server ends the idle connection (as its keep-alive timeout would).
      for (const socket of closing.sockets) socket.end();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await send(connections, `${closing.origin}/`)).body, 'ok');
      assert.equal(closing.sockets.size, 3);
    } finally {
      connections.close();
      closing.server.close();
    }
  });

  it('has no body for HEAD, 204 and 304 answers, and keeps the connection after them', async () => {
    const empty = await httpServer((request, response) => {
      response.statusCode = request.url === '/204' ? 204 : request.url === '/304' ? 304 : 200;
      // node:http sends 204 and 304 without Content-Length; HEAD and 200 with it.
      if (response.statusCode === 200) response.setHeader('content-length', '5');
      response.end(request.method === 'HEAD' || response.statusCode !== 200 ? undefined : 'hello');
    });
    const connections = new Connections();
    try {
      assert.equal((await send(connections, `${empty.origin}/`, { method: 'HEAD' })).body, '');
      const noContent = await send(connections, `${empty.origin}/204`);
      assert.deepEqual([noContent.status, noContent.headers['content-length'], noContent.body], [204, undefined, '']);
      assert.equal((await send(connections, `${empty.origin}/304`)).status, 304);
      const last = await send(connections, `${empty.origin}/`);
      assert.deepEqual([last.status, last.body], [200, 'hello'], 'the connection is still in step');
      assert.equal(empty.sockets.size, 1);
    } finally {
      connections.close();
      empty.server.close();
    }
  });

  it('fails, not hangs, when the server never answers or drops the connection', async () => {
    const silent = await httpServer((request, response) => {
      if (request.url === '/drop') response.socket?.destroy();
      // '/silent': no answer at all.
    });
    const connections = new Connections();
    try {
      await assert.rejects(send(connections, `${silent.origin}/silent`, { timeoutMs: 100 }), /timeout: GET \/silent/);
      await assert.rejects(send(connections, `${silent.origin}/drop`), /closed the connection|ECONNRESET/);
      await assert.rejects(sendOnce('http://127.0.0.1:9/', { timeoutMs: 1000 }), /ECONNREFUSED/);
    } finally {
      connections.close();
      silent.server.close();
    }
  });

  it('does not reuse a connection that sent more than the answer asked for', async () => {
    const extra = await rawServer(['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale']);
    const connections = new Connections();
    try {
      assert.equal((await send(connections, `${extra.origin}/`, { timeoutMs: 2000 })).body, 'ok');
      const second = await send(connections, `${extra.origin}/`, { timeoutMs: 2000 });
      assert.equal(second.body, 'ok', 'not the stray bytes of the first connection');
      assert.equal(extra.connections(), 2);
    } finally {
      connections.close();
      extra.close();
    }
  });

  it('refuses an answer that is not HTTP/1.x', async () => {
    const garbage = await rawServer(['SSH-2.0-OpenSSH\r\n\r\n']);
    try {
      await assert.rejects(sendOnce(`${garbage.origin}/`), /not an HTTP\/1.x status line/);
    } finally {
      garbage.close();
    }
  });
});

describe('bench browser', () => {
  it('keeps cookies, follows same-origin redirects, submits forms and stops at another origin', async () => {
    const site = await httpServer((request, response, body) => {
      const cookie = request.headers.cookie ?? '';
      if (request.url === '/start') {
        response.writeHead(302, { location: '/form', 'set-cookie': 'sid=s1; HttpOnly' }).end();
      } else if (request.url === '/form' && request.method === 'GET') {
        response.setHeader('content-type', 'text/html');
        response.end(`<p>${cookie}</p><form method="post" action="/form"><input type="hidden" name="csrf" value="t&amp;1">
          <input type="email" name="email"><input type="password" name="password"><button name="go" value="yes">Go</button></form>`);
      } else if (request.url === '/form' && cookie === 'sid=s1') {
        response.writeHead(303, { location: `http://127.0.0.1:9/callback?${body}`, 'set-cookie': 'sid=; Max-Age=0' }).end();
      } else {
        response.writeHead(403).end();
      }
    });
    const connections = new Connections();
    try {
      const browser = new Browser(site.origin, connections);
      const page = await browser.navigate(`${site.origin}/start`);
      assert.equal(page.status, 200);
      assert.match(page.body, /<p>sid=s1<\/p>/);
      const [form] = parseForms(page.body);
      assert.deepEqual(form!.fields, [['csrf', 't&1'], ['email', ''], ['password', '']]);
      const done = await browser.submit(page, form!, { email: 'a@example.com', password: 'pw' });
      assert.equal(done.leavingTo, 'http://127.0.0.1:9/callback?csrf=t%261&email=a%40example.com&password=pw&go=yes');
      assert.equal(site.sockets.size, 1, 'one connection for the whole walk');
    } finally {
      connections.close();
      site.server.close();
    }
  });
});
