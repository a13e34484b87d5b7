/**
 * PKCE (RFC 7636) with S256, and the random `state`, from the platform's Web Crypto (Node.js 20,
 * browsers): nothing of cryptography is written here but the base64url spelling.
 */

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 32 random bytes in base64url: 43 characters, as a code verifier (RFC 7636 §4.1) or a state. */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2). */
export async function s256Challenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}
