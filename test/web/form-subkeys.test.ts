/** The keys of one purpose each derived from the server's form key (src/web/form-subkeys.ts). */
import assert from 'node:assert/strict';
import { hkdfSync, randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { subkey } from '../../src/web/form-subkeys.js';

it('is HKDF-SHA256 of the form key with the purpose as info, one key per purpose and form key', () => {
  const formKey = randomBytes(32);
  const device = subkey(formKey, 'stride device cookie');
  assert.deepEqual(device, Buffer.from(hkdfSync('sha256', formKey, Buffer.alloc(0), 'stride device cookie', 32)));
  assert.notDeepEqual(subkey(formKey, 'stride sealed cookie: stride_draft'), device);
  assert.notDeepEqual(subkey(randomBytes(32), 'stride device cookie'), device);
});

it('derives each key once and hands out the same one afterwards', () => {
  const formKey = randomBytes(32);
  assert.equal(subkey(formKey, 'purpose'), subkey(formKey, 'purpose'));
  // A copy of the key's bytes is another key object: derived anew, equal.
  assert.notEqual(subkey(Buffer.from(formKey), 'purpose'), subkey(formKey, 'purpose'));
  assert.deepEqual(subkey(Buffer.from(formKey), 'purpose'), subkey(formKey, 'purpose'));
});
