/**
 * Values the server must read back in clear, kept encrypted at rest: AES-256-GCM under a key of
 * one purpose, derived (HKDF-SHA256, RFC 5869) from a secret of the server, with what the value
 * belongs to bound as additional data, so that a sealed value copied to another row opens nowhere.
 * The one such value is the client secret of an app with a Fitbit-compatible subscriber, which signs
 * its notifications (docs/migrating-from-fitbit.md, "Subscriptions").
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** The form's version: a sealed value of another form is refused rather than misread. */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The 32-byte key of `purpose` under `secret` (HKDF-SHA256, no salt, the purpose as its info). */
export function sealingKey(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), purpose, 32));
}

/** `value` encrypted under `key`, bound to `boundTo`: `v1.` and base64url of IV, tag and ciphertext. */
export function sealValue(key: Buffer, value: string, boundTo: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(boundTo, 'utf8'));
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
}

/** The value `sealed` holds, if it was sealed under `key` bound to `boundTo` and not altered; else null. */
export function unsealValue(key: Buffer, sealed: string, boundTo: string): string | null {
  const [version, body] = sealed.split('.');
  if (version !== VERSION || body === undefined) return null;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
