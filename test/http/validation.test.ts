/**
 * Input schemas are enforced on every request: what a schema refuses is a 400 invalid_request that
 * names the part and the field, after the route's parser had its say; query strings are checked as
 * their values are meant, while the route still reads them as sent; bodies are never changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { refuseSchemaViolation } from '../../src/http/validation.js';
import { createTestApp, type TestApp } from '../support/app.js';

describe('schema validation', () => {
  let t: TestApp;
  const seen: unknown[] = [];
  before(async () => {
    t = await createTestApp('sqlite', {}, (app) => {
      const schema = {
        querystring: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } },
        body: { type: 'object', additionalProperties: false, properties: { name: { type: 'string', maxLength: 5 } } },
      };
      app.post('/test/validated', { schema, attachValidation: true }, async (request) => {
        seen.push({ query: { ...(request.query as object) }, body: request.body });
        refuseSchemaViolation(request);
        return { ok: true };
      });
    });
  });
  after(() => t.close());

  const send = (query: string, body: unknown) =>
    t.app.inject({ method: 'POST', url: `/test/validated${query}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  it('accepts what the schema accepts, and hands the route its input as sent', async () => {
    const response = await send('?n=5', { name: 'Ada' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(seen.at(-1), { query: { n: '5' }, body: { name: 'Ada' } });
  });

  it('refuses what the schema refuses with invalid_request naming the part and the field', async () => {
    for (const [query, body, words] of [
      ['?n=abc', {}, /^querystring\/n must be integer$/],
      ['?n=0', {}, /^querystring\/n must be >= 1$/],
      ['', { name: 'much too long' }, /^body\/name must NOT have more than 5 characters$/],
      ['', { name: 'Ada', extra: 1 }, /^body\/extra is not a known field$/],
    ] as const) {
      const response = await send(query, body);
      assert.equal(response.statusCode, 400, `${query} ${JSON.stringify(body)}`);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, words);
    }
    assert.deepEqual(seen.at(-1), { query: {}, body: { name: 'Ada', extra: 1 } }, 'nothing removed from the body');
  });
});
