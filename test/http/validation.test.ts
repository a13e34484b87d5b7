/**
 * Input schemas are enforced on every request: what a schema refuses is a 400 invalid_request that
 * names the part and the field (or in a route's own words), after the route's parser had its say;
 * query strings are checked as their values are meant, integers written in digits only, while the
 * route still reads them as sent; bodies are never changed. Stride's keywords refuse a time too far
 * ahead of the clock and an item repeating an earlier one, so a batch is refused at its first bad item.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { refuseSchemaViolation, wordedBy } from '../../src/http/validation.js';
import { createTestApp, type TestApp } from '../support/app.js';

describe('schema validation', () => {
  let t: TestApp;
  const seen: unknown[] = [];
  let handled = 0;
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
      const batch = {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              required: ['at'],
              properties: { at: { type: 'integer', minimum: 0, notAfterClock: 60 } },
              notRepeated: { field: 'at', what: 'minute' },
            },
          },
        },
      };
      app.post('/test/batch', { schema: { body: batch } }, async () => {
        handled++;
        return { ok: true };
      });
      app.post('/test/worded', { schema: { body: batch }, schemaErrorFormatter: wordedBy((error, part) => `in ${part}: ${error.keyword} at ${error.instancePath}`) }, async () => ({ ok: true }));
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
      ['', [], /^body must be object$/],
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

  it('reads an integer of a query only as decimal digits', async () => {
    for (const query of ['?n=1e9', '?n=0x10', '?n=1.0', '?n=+5', '?n=%205']) {
      const response = await send(query, {});
      assert.equal(response.statusCode, 400, query);
      assert.match(response.json().error_description, /^querystring\/n must be integer$/, query);
    }
    assert.equal((await send('?n=0012', {})).statusCode, 200);
    assert.match((await send('?n=-3', {})).json().error_description, /^querystring\/n must be >= 1$/);
  });

  it('refuses a batch at its first bad item, a repeat or a time ahead of the clock among them', async () => {
    const now = t.clock();
    const post = (items: unknown[], url = '/test/batch') => t.app.inject({ method: 'POST', url, payload: { items } });
    const cases: Array<[unknown[], RegExp]> = [
      [[{ at: 60 }, { at: 120 }, { at: 60 }, { at: 'late' }], /^body\/items\/2\/at repeats the minute of body\/items\/0; send one sample per minute$/],
      [[{ at: 180 }, { at: 60 }, { at: 120 }, { at: 60 }], /^body\/items\/3\/at repeats the minute of body\/items\/1; send one sample per minute$/],
      [[{ at: 60 }, { at: now + 61 }, { at: -1 }], /^body\/items\/1\/at is more than 60 seconds ahead of the server's clock$/],
      [[{ at: 60 }, { at: -1 }, { at: 60 }], /^body\/items\/1\/at must be >= 0$/],
    ];
    for (const [items, words] of cases) {
      const response = await post(items);
      assert.equal(response.statusCode, 400, JSON.stringify(items));
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, words);
    }
    // The check of an array starts afresh: the minutes of the batch before are not repeats.
    assert.equal((await post([{ at: 60 }, { at: 120 }, { at: now + 60 }])).statusCode, 200);
    assert.equal((await post([{ at: 120 }, { at: 60 }])).statusCode, 200);
    assert.equal(handled, 2, 'the handler ran only for the batches the schema accepted');
  });

  it('words a violation in the route\'s own words when it has them', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/test/worded', payload: { items: [{ at: 60 }, { at: 60 }] } });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error, 'invalid_request');
    assert.equal(response.json().error_description, 'in body: notRepeated at /items/1/at');
  });
});
