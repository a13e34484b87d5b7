/** PKCE (RFC 7636) with the S256 method only; `plain` offers no protection (RFC 9700 §2.1.1). */
import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../security/secrets.js';

/** BASE64URL(SHA256(verifier)) is always 43 characters (RFC 7636 §4.2). */
const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

export const SUPPORTED_CHALLENGE_METHODS = ['S256'] as const;

export function isValidCodeChallenge(challenge: string): boolean {
  return CHALLENGE_PATTERN.test(challenge);
}

export function isValidCodeVerifier(verifier: string): boolean {
  return VERIFIER_PATTERN.test(verifier);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** RFC 7636 §4.6. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  return constantTimeEqual(s256(verifier), challenge);
}
