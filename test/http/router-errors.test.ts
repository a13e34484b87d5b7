/** Requests the router refuses before any route runs still get the one error shape and the headers. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { pageSecurityHeaders } from '../../src/http/security-headers.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';

forEachDialect('router errors', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  function assertErrorShape(response: Awaited<ReturnType<TestApp['app']['inject']>>, status: number, error: string, path: string) {
    assert.equal(response.statusCode, status, response.body);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
    assert.equal(body.error, error);
    assert.ok(!response.body.includes(path.slice(-40)), 'the path is not echoed');
    assert.doesNotMatch(response.body, /FST_|Fastify/);
    assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    for (const [name, value] of Object.entries(pageSecurityHeaders(false))) assert.equal(response.headers[name], value, name);
  }

  it('answers a path parameter over the router limit with 404 not_found, not 414 echoing the path', async () => {
    for (const path of [
      `/dashboard/apps/${'a'.repeat(101)}`,
      `/dashboard/apps/${'<script>'.repeat(40)}/delete`,
      `/account/connected-apps/${'x'.repeat(5000)}/revoke`,
    ]) {
      const method = path.endsWith('/revoke') ? 'POST' : 'GET';
      assertErrorShape(await t.app.inject({ method, url: path }), 404, 'not_found', path);
    }
  });

  it('answers a path with bad percent-encoding with 400 invalid_request', async () => {
    for (const path of ['/dashboard/apps/%E0%A4%A', '/dashboard/apps/%ED%A0%80/delete']) {
      assertErrorShape(await t.app.inject({ method: 'GET', url: path }), 400, 'invalid_request', path);
    }
  });

  it('still serves a parameter of ordinary length', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/dashboard/apps/${'a'.repeat(100)}` });
    assert.equal(response.statusCode, 302, 'to sign in');
  });
});
