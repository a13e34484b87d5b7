import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { BODY_LIMIT_BYTES } from '../src/app.js';
import { ApiError } from '../src/errors.js';
import { createTestApp, type TestApp } from './support/app.js';
import { forEachDialect } from './support/databases.js';

forEachDialect('error conventions and health', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect, {}, (app) => {
      app.post('/test/echo', async (request) => ({ received: request.body }));
      app.get('/test/explode', async () => {
        throw new Error('SELECT secret FROM users -- at Object.handler (/srv/app.js:1:1)');
      });
      app.get('/test/teapot', async () => {
        throw new ApiError('insufficient_scope', 'needs more', { 'www-authenticate': 'Bearer scope="x"' });
      });
    });
  });
  after(() => t.close());

  it('answers an unknown path with 404 not_found JSON', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/no/such/thing?x=1' });
    assert.equal(response.statusCode, 404);
    assert.match(String(response.headers['content-type']), /application\/json/);
    assert.deepEqual(response.json(), { error: 'not_found', error_description: 'no endpoint GET /no/such/thing' });
  });

  it('gives every response a request id', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('turns an exception into 500 server_error with the request id and no stack or SQL', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/test/explode' });
    assert.equal(response.statusCode, 500);
    const body = response.json();
    assert.equal(body.error, 'server_error');
    assert.equal(body.request_id, response.headers['x-request-id']);
    assert.ok(body.error_description.includes(body.request_id));
    assert.doesNotMatch(response.body, /SELECT|secret|handler|\.js:/);
  });

  it('sends an ApiError with its status, headers and the one error shape', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/test/teapot' });
    assert.equal(response.statusCode, 403);
    assert.equal(response.headers['www-authenticate'], 'Bearer scope="x"');
    assert.deepEqual(response.json(), { error: 'insufficient_scope', error_description: 'needs more' });
  });

  it('refuses an oversized body with 413 request_too_large', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT_BYTES) }),
    });
    assert.equal(response.statusCode, 413);
    assert.equal(response.json().error, 'request_too_large');
  });

  it('refuses an unsupported content type with 415 unsupported_media_type', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'text/xml' },
      payload: '<a/>',
    });
    assert.equal(response.statusCode, 415);
    assert.equal(response.json().error, 'unsupported_media_type');
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"samples": [',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error, 'invalid_request');
  });

  it('parses form bodies', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'a=1&b=two',
    });
    assert.deepEqual(response.json(), { received: { a: '1', b: 'two' } });
  });

  it('reports /healthz and /readyz', async () => {
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
  });
});

forEachDialect('readiness without a database', (dialect) => {
  it('answers /readyz with 503 once the database is gone, while /healthz stays 200', async () => {
    const t = await createTestApp(dialect);
    try {
      await t.database.db.close();
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.json().error, 'temporarily_unavailable');
      assert.match(String(ready.headers['retry-after']), /^\d+$/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await t.app.close();
      await t.database.drop().catch(() => undefined);
    }
  });
});
