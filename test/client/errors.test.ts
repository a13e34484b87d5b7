/** Retry-After as Stride and the proxies in front of it send it (RFC 9110 §10.2.3). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { retryAfterSeconds, StrideError } from '@stride/client';

it('reads Retry-After as delta-seconds or as an HTTP-date, and nothing else', () => {
  const now = Date.parse('2026-11-26T06:00:00Z');
  assert.equal(retryAfterSeconds('120', now), 120);
  assert.equal(retryAfterSeconds(' 7 ', now), 7);
  assert.equal(retryAfterSeconds('Thu, 26 Nov 2026 06:01:30 GMT', now), 90);
  assert.equal(retryAfterSeconds('Thu, 26 Nov 2026 05:00:00 GMT', now), 0, 'a date in the past: at once');
  assert.equal(retryAfterSeconds(null, now), undefined);
  assert.equal(retryAfterSeconds('', now), undefined);
  assert.equal(retryAfterSeconds('soon', now), undefined);
  assert.equal(retryAfterSeconds('-5', now), undefined);
});

it('names the error and its description in the message', () => {
  const error = new StrideError({ error: 'rate_limited', errorDescription: 'too many requests', status: 429, retryAfter: 3 });
  assert.ok(error instanceof Error);
  assert.equal(error.message, 'rate_limited: too many requests');
  assert.equal(error.name, 'StrideError');
  assert.equal(new StrideError({ error: 'invalid_state' }).message, 'invalid_state');
});
