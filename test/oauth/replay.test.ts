/** The sealed replay answer of a rotation (src/oauth/replay.ts). */
import assert from 'node:assert/strict';
import { hkdfSync } from 'node:crypto';
import { it } from 'node:test';
import { openReplay, replayKey, sealReplay } from '../../src/oauth/replay.js';
import { newCredential } from '../../src/security/secrets.js';

const payload = { access_token: 'sat_a', refresh_token: 'srt_b', scope: 'read_profile', access_expires_at: 1_900_000_000 };

it('the replay key is HKDF-SHA256 of the raw token (RFC 5869, no salt, 32 bytes)', () => {
  const info = Buffer.from('stride refresh-token replay response v1');
  const tokens = ['srt_x', 'srt_é∂ unicode 😀', 'x'.repeat(300), '', ...Array.from({ length: 100 }, () => newCredential('refreshToken'))];
  for (const token of tokens) {
    const expected = Buffer.from(hkdfSync('sha256', Buffer.from(token), Buffer.alloc(0), info, 32));
    assert.deepEqual(replayKey(token), expected, token);
  }
});

it('opens only with the key of the same token, and refuses a tampered answer', () => {
  const token = newCredential('refreshToken');
  const sealed = sealReplay(replayKey(token), payload);
  assert.notEqual(sealReplay(replayKey(token), payload), sealed, 'a fresh IV each time');
  assert.deepEqual(openReplay(replayKey(token), sealed), payload);
  assert.equal(openReplay(replayKey(newCredential('refreshToken')), sealed), null);
  const raw = Buffer.from(sealed, 'base64url');
  raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
  assert.equal(openReplay(replayKey(token), raw.toString('base64url')), null);
  assert.equal(openReplay(replayKey(token), 'short'), null);
});
