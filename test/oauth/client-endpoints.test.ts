/**
 * The client endpoints share one preamble in one order (oauth/routes.ts): a body that is not a
 * form is 415 and a repeated parameter 400 before any client is looked at, then an unknown client
 * is 401 invalid_client whatever else its request lacks (RFC 6749 §3.2 and §5.2, RFC 7009 §2.1,
 * RFC 7662 §2.1, RFC 8628 §3.1, RFC 9126 §2.1). SQLite only: the order is the routes', not the
 * database's.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { createOAuthTestApp } from './flow.js';

const ENDPOINTS = ['/oauth2/token', '/oauth2/device_authorization', '/oauth2/revoke', '/oauth2/introspect', '/oauth2/par'];
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let t: TestApp;
before(async () => {
  t = await createOAuthTestApp('sqlite');
});
after(() => t.close());

it('checks the body, then the parameters, then the client, in the same order at every client endpoint', async () => {
  for (const url of ENDPOINTS) {
    const json = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{"client_id":"sc_nobody"}' });
    assert.equal(json.statusCode, 415, `${url}: not a form`);
    const repeated = await t.app.inject({ method: 'POST', url, headers: FORM, payload: 'client_id=sc_nobody&client_id=sc_other' });
    assert.equal(repeated.statusCode, 400, `${url}: a repeated parameter`);
    assert.equal(repeated.json().error, 'invalid_request', url);
    // Nothing but an unknown client: the client is judged before what its request lacks.
    const unknown = await t.app.inject({ method: 'POST', url, headers: FORM, payload: 'client_id=sc_nobody' });
    assert.equal(unknown.statusCode, 401, `${url}: ${unknown.body}`);
    assert.equal(unknown.json().error, 'invalid_client', url);
    assert.equal(unknown.headers['cache-control'], 'no-store', url);
  }
});
