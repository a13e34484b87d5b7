/** Sealed values (src/security/sealed-values.ts): AES-256-GCM under a key per purpose, bound to what they belong to. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { sealingKey, sealValue, unsealValue } from '../../src/security/sealed-values.js';

const secret = randomBytes(32);
const key = sealingKey(secret, 'test purpose');

it('opens what it sealed, and nothing sealed under another key, purpose or binding, or altered', () => {
  const sealed = sealValue(key, 'scs_client-secret', 'app 1');
  assert.match(sealed, /^v1\.[A-Za-z0-9_-]+$/);
  assert.ok(!sealed.includes('client-secret'));
  assert.notEqual(sealValue(key, 'scs_client-secret', 'app 1'), sealed, 'a new IV each time');
  assert.equal(unsealValue(key, sealed, 'app 1'), 'scs_client-secret');
  assert.equal(unsealValue(key, sealed, 'app 2'), null, 'bound to what it belongs to');
  assert.equal(unsealValue(sealingKey(secret, 'another purpose'), sealed, 'app 1'), null);
  assert.equal(unsealValue(sealingKey(randomBytes(32), 'test purpose'), sealed, 'app 1'), null);
  const bytes = Buffer.from(sealed.slice(3), 'base64url');
  bytes[bytes.length - 1]! ^= 1;
  assert.equal(unsealValue(key, `v1.${bytes.toString('base64url')}`, 'app 1'), null, 'altered');
  for (const other of ['', 'v1.', 'v2.' + sealed.slice(3), 'v1.AAAA', 'not sealed']) assert.equal(unsealValue(key, other, 'app 1'), null, other);
});

it('derives a 32-byte key per purpose, the same in every process for the same secret', () => {
  assert.equal(key.length, 32);
  assert.deepEqual(sealingKey(Buffer.from(secret), 'test purpose'), key);
  assert.notDeepEqual(sealingKey(secret, 'test purpose 2'), key);
});
