/**
 * The stored answer of a refresh-token rotation, for retries inside the replay window (docs/oauth.md).
 * It is encrypted (AES-256-GCM) with a key derived (HKDF-SHA256) from the OLD raw refresh token,
 * which the server never keeps: only a holder of that token can read the answer back.
 */
import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
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

const INFO = Buffer.from('stride refresh-token replay response v1');
/** RFC 5869 §2.2: an absent salt is HashLen zero bytes. */
const ZERO_SALT = Buffer.alloc(32);
/** HKDF-Expand's first block: T(1) = HMAC(PRK, info || 0x01). */
const INFO_BLOCK_1 = Buffer.concat([INFO, Buffer.from([1])]);

/**
 * HKDF-SHA256 (RFC 5869) of the raw refresh token, no salt, 32 bytes: extract, then the single
 * expand block that 32 bytes need. The output is exactly `hkdfSync('sha256', token, '', INFO, 32)`
 * (a test holds the two equal), at a third of the cost of that call. Derive it once per request and
 * pass it to sealReplay and openReplay.
 */
export function replayKey(refreshToken: string): Buffer {
  const prk = createHmac('sha256', ZERO_SALT).update(refreshToken, 'utf8').digest();
  return createHmac('sha256', prk).update(INFO_BLOCK_1).digest();
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
