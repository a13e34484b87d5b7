import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Browser, connection, parseForms, send } from '../../../bench/lib/browser.js';

/** What the server saw of each request: method, path and Cookie header. */
interface Seen {
  method: string;
  url: string;
  cookie: string | undefined;
  body: string;
}

describe('the load drivers\' browser', () => {
  let server: Server;
  let origin: string;
  const seen: Seen[] = [];

  /** Runs `use` with a connection of its own to the test server, closed afterwards. */
  async function withClient(use: (client: ReturnType<typeof connection>) => Promise<void>): Promise<void> {
    const client = connection(origin);
    try {
      await use(client);
    } finally {
      await client.destroy();
    }
  }

  before(async () => {
    server = createServer((request: IncomingMessage, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method!, url: request.url!, cookie: request.headers.cookie, body });
        const path = request.url!.split('?')[0];
        if (path === '/chunks') {
          // A body written in parts, with a character split across two of them.
          const text = Buffer.from('first part, ünïcode, last part');
          response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
          response.write(text.subarray(0, 14));
          setTimeout(() => response.end(text.subarray(14)), 5);
        } else if (path === '/sign-in') {
          response.writeHead(303, { location: '/signed-in', 'set-cookie': ['session=abc; Path=/; HttpOnly', 'device=d1; Max-Age=60; Path=/'] });
          response.end();
        } else if (path === '/signed-in') {
          response.writeHead(302, { location: '/home' });
          response.end();
        } else if (path === '/sign-out') {
          response.writeHead(200, { 'set-cookie': ['session=; Max-Age=0; Path=/', 'device=d2; Path=/'] });
          response.end('signed out');
        } else if (path === '/away') {
          response.writeHead(302, { location: 'http://127.0.0.2:9/callback?code=c1&state=s' });
          response.end();
        } else if (path === '/loop') {
          response.writeHead(302, { location: '/loop' });
          response.end();
        } else {
          response.writeHead(200, { 'content-type': 'text/html' });
          response.end(`<p>${path}</p>`);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads a body sent in parts whole, and the headers by lower-case name', async () => {
    await withClient(async (client) => {
      const answer = await send(client, '/chunks');
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'first part, ünïcode, last part');
      assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
      // The connection takes the next request once the body is read.
      assert.equal((await send(client, '/after')).body, '<p>/after</p>');
    });
  });

  it('sends the method, headers and body it is given', async () => {
    await withClient(async (client) => {
      await send(client, '/form?x=1', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' });
      assert.deepEqual(seen.at(-1), { method: 'POST', url: '/form?x=1', cookie: undefined, body: 'a=1&b=2' });
    });
  });

  it('follows redirects on its origin as GET, keeping the cookies set on the way and sending them', async () => {
    await withClient(async (client) => {
      const browser = new Browser(origin, client);
      seen.length = 0;
      const page = await browser.navigate('/sign-in', { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(page.status, 200);
      assert.equal(page.url, `${origin}/home`);
      assert.equal(page.body, '<p>/home</p>');
      assert.deepEqual(seen.map(({ method, url, cookie }) => [method, url, cookie]), [
        ['POST', '/sign-in', undefined],
        ['GET', '/signed-in', 'session=abc; device=d1'],
        ['GET', '/home', 'session=abc; device=d1'],
      ]);
      // A cookie deleted by the server (Max-Age=0) is no longer sent; one replaced is sent anew.
      await browser.fetch('/sign-out');
      await browser.fetch('/home');
      assert.equal(seen.at(-1)!.cookie, 'device=d2');
    });
  });

  it('stops at a redirect that leaves its origin and names where it leads', async () => {
    await withClient(async (client) => {
      const page = await new Browser(origin, client).navigate(`${origin}/away`);
      assert.equal(page.status, 302);
      assert.equal(page.leavingTo, 'http://127.0.0.2:9/callback?code=c1&state=s');
    });
  });

  it('refuses a request to another origin, and a redirect loop', async () => {
    await withClient(async (client) => {
      const browser = new Browser(origin, client);
      await assert.rejects(browser.fetch('http://127.0.0.2:9/'), /not this browser's origin/);
      await assert.rejects(browser.navigate('/loop'), /too many redirects/);
    });
  });

  it('submits a form: its fields as shown, what is filled in, and its first submit button', async () => {
    await withClient(async (client) => {
      const browser = new Browser(origin, client);
      const [form] = parseForms('<form method="post" action="/form"><input type="hidden" name="t" value="a&amp;b"><input name="email" type="email"><button name="decision" value="allow">Allow</button></form>');
      await browser.submit({ url: `${origin}/page` }, form!, { email: 'p@example.com' });
      assert.deepEqual(seen.at(-1), { method: 'POST', url: '/form', cookie: undefined, body: 't=a%26b&email=p%40example.com&decision=allow' });
    });
  });
});

describe('parseForms', () => {
  it('reads POST forms only: their action, fields with entities decoded, checked boxes, the first submit', () => {
    const html = `
      <form method="get" action="/search"><input name="q" value="x"></form>
      <form method="post" action="/oauth2/authorize?a=1&amp;b=2" class="stack">
        <input type="hidden" name="csrf_token" value="t0k&quot;en">
        <input type='hidden' name='state' value='it&#39;s &lt;ok&gt;'>
        <input type="checkbox" name="granted_scope" value="read_profile" checked>
        <input type="checkbox" name="granted_scope" value="read_sleep">
        <input type="text" name="note">
        <input type="submit" value="no name">
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </form>`;
    assert.deepEqual(parseForms(html), [
      {
        action: '/oauth2/authorize?a=1&b=2',
        fields: [['csrf_token', 't0k"en'], ['state', "it's <ok>"], ['granted_scope', 'read_profile'], ['note', '']],
        types: { csrf_token: 'hidden', state: 'hidden', granted_scope: 'checkbox', note: 'text' },
        submit: ['decision', 'allow'],
      },
    ]);
  });
});
