/**
 * Random credentials and their stored form (docs/SECURITY.md): every secret, token, code and session id is
 * 256 random bits, shown once, and kept only as its SHA-256. A hash of a 256-bit random value
 * needs no salt or slow hash: it cannot be guessed or brute-forced.
 */
import { hash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

/** Prefixes make leaked credentials recognisable (secret scanners, logs) and catch mix-ups. */
export const CREDENTIAL_PREFIX = {
  accessToken: 'sat_',
  refreshToken: 'srt_',
  authorizationCode: 'sac_',
  deviceCode: 'sdc_',
  clientSecret: 'scs_',
  session: 'sss_',
  /** The random part of a pushed request's request_uri (RFC 9126). */
  pushedRequest: 'spr_',
  /** RFC 7592's registration access token. */
  registrationAccessToken: 'sra_',
  /** RFC 7591's initial access token, made with `stride registration-token create`. */
  initialAccessToken: 'sia_',
  /** A single-use link to set a new password (`stride users reset-link`). */
  passwordReset: 'spw_',
} as const;

export type CredentialKind = keyof typeof CREDENTIAL_PREFIX;

const CREDENTIAL_BYTES = 32;

export function newCredential(kind: CredentialKind): string {
  return CREDENTIAL_PREFIX[kind] + randomBytes(CREDENTIAL_BYTES).toString('base64url');
}

/**
 * CSPRNG bytes for the token endpoint's hot path, drawn from a 4 KiB block filled by one call to
 * the CSPRNG instead of one call per value (the call, not the bytes, is the cost). Every byte is
 * handed out once, copied out and then zeroed in the block, so the block never holds a value
 * already issued; the output is the CSPRNG's, as with randomBytes.
 */
const RANDOM_BLOCK_SIZE = 4096;
const randomBlock = Buffer.alloc(RANDOM_BLOCK_SIZE);
let randomOffset = RANDOM_BLOCK_SIZE;

export function freshRandomBytes(size: number): Buffer {
  if (size > RANDOM_BLOCK_SIZE / 8) return randomBytes(size);
  if (randomOffset + size > RANDOM_BLOCK_SIZE) {
    randomFillSync(randomBlock);
    randomOffset = 0;
  }
  const bytes = Buffer.allocUnsafe(size);
  randomBlock.copy(bytes, 0, randomOffset, randomOffset + size);
  randomBlock.fill(0, randomOffset, randomOffset + size);
  randomOffset += size;
  return bytes;
}

/**
 * Access and refresh tokens start with the time they were issued: 12 lowercase hex digits of Unix
 * milliseconds after the prefix, then 256 random bits. The time is not secret (it is the token's
 * `created_at`); it makes the stored key of each new token sort after the keys of older ones, so
 * the token tables grow at their ends instead of at a random page of their primary-key index per
 * insert — a refresh rotation writes a few shared pages instead of several scattered ones.
 */
const TIME_DIGITS = 12;

function issuedAtPart(nowMs: number): string {
  return nowMs.toString(16).padStart(TIME_DIGITS, '0');
}

/**
 * An access token and a refresh token from 64 fresh random bytes, split in two independent
 * 256-bit halves (the same entropy each as two separate draws).
 */
export function newTokenPair(nowMs: number = Date.now()): { accessToken: string; refreshToken: string } {
  const bytes = freshRandomBytes(2 * CREDENTIAL_BYTES);
  const issuedAt = issuedAtPart(nowMs);
  return {
    accessToken: CREDENTIAL_PREFIX.accessToken + issuedAt + bytes.toString('base64url', 0, CREDENTIAL_BYTES),
    refreshToken: CREDENTIAL_PREFIX.refreshToken + issuedAt + bytes.toString('base64url', CREDENTIAL_BYTES),
  };
}

/**
 * The stored key of an access or refresh token: its issue-time digits followed by the SHA-256 of
 * the whole token (hex). Only this key is stored; finding a token is a primary-key lookup of the
 * key computed from what the client sent. Anything that is not a well-formed token yields a key
 * no stored token has.
 */
export function tokenKey(token: string): string {
  const start = CREDENTIAL_PREFIX.accessToken.length; // the refresh-token prefix is as long
  const issuedAt = token.slice(start, start + TIME_DIGITS);
  // Only hex digits reach the key, and so the database (PostgreSQL refuses a NUL in text).
  return (ISSUED_AT.test(issuedAt) ? issuedAt : NOT_ISSUED_HERE) + hashCredential(token);
}

const ISSUED_AT = /^[0-9a-f]{12}$/;
/** Not hex: no stored key starts with it. */
const NOT_ISSUED_HERE = '-'.repeat(TIME_DIGITS);

/** The stored form of a credential: lowercase hex SHA-256 (one-shot `crypto.hash`, no Hash object). */
export function hashCredential(value: string): string {
  return hash('sha256', value, 'hex');
}

/**
 * What a missing credential hash is compared against, so that the comparison runs alike: not hex,
 * so no hashCredential output equals it (a hash of a fixed text would be matched by sending that text).
 */
export const NO_CREDENTIAL_HASH = '-'.repeat(64);

/**
 * Constant-time string comparison, whatever the lengths: the SHA-256 digests of both are compared,
 * 32 bytes each, so the time tells neither how much of a secret was guessed nor how long it is
 * (an operator's METRICS_TOKEN has any length; a length check first would answer that at once).
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digestBytes(a), digestBytes(b));
}

/** SHA-256 as bytes, by way of a 'binary' (latin1) string: `hash` makes no Buffer of its own for one. */
const digestBytes = (value: string) => Buffer.from(hash('sha256', value, 'binary'), 'binary');

/** A public client identifier: random, URL-safe, not secret. */
export function newClientId(): string {
  return randomBytes(16).toString('hex');
}
