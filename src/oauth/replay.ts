/**
 * The stored answer of a refresh-token rotation, for retries inside the replay window (docs/oauth.md).
 * It is encrypted (AES-256-GCM) with a key derived (HKDF-SHA256) from the OLD raw refresh token,
 * which the server never keeps: only a holder of that token can read the answer back.
 */
import { createCipheriv, createDecipheriv, hash } from 'node:crypto';
import { freshRandomBytes } from '../security/secrets.js';

export interface ReplayPayload {
  access_token: string;
  refresh_token: string;
  scope: string;
  /** When the access token expires (Unix seconds), so a replay reports the remaining lifetime. */
  access_expires_at: number;
  /** DPoP when the access token is bound to a key; absent in answers sealed before DPoP. */
  token_type?: 'Bearer' | 'DPoP';
}

const INFO = 'stride refresh-token replay response v1';

/*
 * The two HMAC-SHA256s of HKDF are written with one-shot SHA-256 calls (RFC 2104:
 * H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)), K zero-padded to the 64-byte block): createHmac sets up a new
 * OpenSSL context on every call, `hash` reuses one. Digests travel as 'binary' strings (latin1, a byte
 * a character), which `hash` returns without allocating a Buffer.
 */
const BLOCK = 64;
/** HKDF-Extract's key is the absent salt, HashLen zero bytes (RFC 5869 §2.2): its pads are ASCII. */
const ZERO_KEY_IPAD = '6'.repeat(BLOCK); // 0x36 a byte
const ZERO_KEY_OPAD = '\\'.repeat(BLOCK); // 0x5c a byte
/** T(1) = HMAC(PRK, info ‖ 0x01): the inner pad block then the message; the outer pad block then room for the inner digest. */
const EXPAND_INNER = Buffer.concat([Buffer.alloc(BLOCK, 0x36), Buffer.from(`${INFO}\x01`, 'binary')]);
const EXPAND_OUTER = Buffer.alloc(BLOCK + 32, 0x5c);

/**
 * HKDF-SHA256 (RFC 5869) of the raw refresh token, no salt, 32 bytes: extract, then the single
 * expand block that 32 bytes need. The output is exactly `hkdfSync('sha256', token, '', INFO, 32)`
 * (a test holds the two equal). Derive it once per request and pass it to sealReplay and
 * openReplay.
 */
export function replayKey(refreshToken: string): Buffer {
  // Extract: PRK = HMAC(salt, token), the token as UTF-8 (as createHmac's update would take it).
  const innerDigest = hash('sha256', ZERO_KEY_IPAD + refreshToken, 'binary');
  const prk = Buffer.from(hash('sha256', Buffer.from(ZERO_KEY_OPAD + innerDigest, 'binary'), 'binary'), 'binary');
  // Expand: PRK XORed into the first 32 bytes of each pad block.
  const inner = Buffer.from(EXPAND_INNER);
  const outer = Buffer.from(EXPAND_OUTER);
  prk.forEach((byte, i) => {
    inner[i] = 0x36 ^ byte;
    outer[i] = 0x5c ^ byte;
  });
  outer.write(hash('sha256', inner, 'binary'), BLOCK, 'binary');
  return Buffer.from(hash('sha256', outer, 'binary'), 'binary');
}

export function sealReplay(key: Buffer, payload: ReplayPayload): string {
  const iv = freshRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Returns null when the sealed value does not open with this key. */
export function openReplay(key: Buffer, sealed: string): ReplayPayload | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as ReplayPayload;
  } catch {
    return null;
  }
}
