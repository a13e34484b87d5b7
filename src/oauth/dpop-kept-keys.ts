/**
 * DPoP keys kept by the text of the proof's protected header (switch `dpop-keys`,
 * src/speed-switches.ts). A client signs every proof with the same key (RFC 9449 §2) and sends it
 * in the same protected header. The first proof with a header is verified by jose (./dpop.ts) and
 * its key is then kept here by the exact text of the encoded header. A later proof whose header is
 * that same text has passed every check of the header already, so only its signature is checked,
 * with node:crypto against the kept key, in the request's turn.
 *
 * What it saves: jose's WebCrypto check costs a thread-pool round trip and the key's import for
 * every proof. Needed by rows 11 and 12 of `npm run bench` (DPoP-bound requests and refresh
 * chains). The plain path (NO_KEPT_KEYS) has jose verify every proof; test/oauth/dpop-kept-keys
 * shows both give the same verdicts and claims.
 */
import { constants, KeyObject, verify, type VerifyKeyObjectInput } from 'node:crypto';
import type { JWTPayload } from 'jose';

/** A proof's signature or claims set was refused; the caller answers with the generic refusal. */
export class InvalidProof extends Error {}

/**
 * How a signature of each accepted algorithm is checked with node:crypto once its key is kept
 * (RFC 7518 §3.3–§3.5, RFC 8037 §3.1): the digest, and the signature's encoding or padding.
 */
const SIGNATURES: Readonly<Record<string, { digest: string | null; options: Omit<VerifyKeyObjectInput, 'key'> }>> = {
  // §3.4: ECDSA signatures are R ‖ S, not DER.
  ES256: { digest: 'sha256', options: { dsaEncoding: 'ieee-p1363' } },
  ES384: { digest: 'sha384', options: { dsaEncoding: 'ieee-p1363' } },
  EdDSA: { digest: null, options: {} },
  Ed25519: { digest: null, options: {} },
  // §3.5: the salt is as long as the digest.
  PS256: { digest: 'sha256', options: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } },
  RS256: { digest: 'sha256', options: { padding: constants.RSA_PKCS1_PADDING } },
};

/** Keys kept, at most; beyond, the oldest is let go. */
const MAX_KEPT_KEYS = 10_000;
/** A protected header longer than this (no key of the accepted algorithms needs it) is not kept. */
const MAX_KEPT_HEADER_LENGTH = 2048;

export interface KeptProofKeys {
  /**
   * The claims set of a proof whose encoded header (its text up to `headerEnd`) is a kept key's,
   * its signature checked with that key, and the key's thumbprint; undefined when the header is
   * not kept (jose must verify the proof). Throws InvalidProof where jose would refuse the proof.
   */
  claims(proof: string, headerEnd: number, now: number): { payload: JWTPayload; jkt: string } | undefined;
  /** Keeps the key jose verified a proof with, under the proof's encoded header. */
  keep(encodedHeader: string, alg: string, key: unknown, jkt: string): void;
}

interface KeptKey {
  /** The proof's key as node:crypto uses it. */
  key: KeyObject;
  signature: (typeof SIGNATURES)[string];
  /** RFC 7638 thumbprint (SHA-256, base64url) of the key. */
  jkt: string;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The claims set of a proof (a compact JWS) whose encoded header is a kept key's, once its
 * signature is checked with that key — refused in the cases jose refuses a JWT for (RFC 7515 §7.1,
 * RFC 7519 §7.2): a bad signature, a claims set that is not a JSON object, `iat`, `nbf` or `exp`
 * that is not a number, `nbf` in the future, `exp` past.
 */
function claimsSignedBy(kept: KeptKey, proof: string, headerEnd: number, now: number): JWTPayload {
  const payloadEnd = proof.indexOf('.', headerEnd + 1);
  const encodedPayload = proof.slice(headerEnd + 1, payloadEnd);
  const encodedSignature = proof.slice(payloadEnd + 1);
  let valid: boolean;
  try {
    const signingInput = Buffer.from(proof.slice(0, payloadEnd), 'latin1');
    valid = verify(kept.signature.digest, signingInput, { key: kept.key, ...kept.signature.options }, Buffer.from(encodedSignature, 'base64url'));
  } catch {
    valid = false;
  }
  if (!valid) throw new InvalidProof('bad signature');
  let claims: unknown;
  try {
    claims = JSON.parse(strictUtf8.decode(Buffer.from(encodedPayload, 'base64url')));
  } catch {
    throw new InvalidProof('the claims set is not JSON');
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw new InvalidProof('the claims set is not an object');
  const { iat, nbf, exp } = claims as JWTPayload;
  for (const date of [iat, nbf, exp]) if (date !== undefined && typeof date !== 'number') throw new InvalidProof('a date is not a number');
  if (nbf !== undefined && nbf > now) throw new InvalidProof('not yet valid');
  if (exp !== undefined && exp <= now) throw new InvalidProof('expired');
  return claims as JWTPayload;
}

/** Keys kept by their proofs' header text, at most `maxKeys`, the oldest let go first. */
export function keptProofKeys(maxKeys = MAX_KEPT_KEYS): KeptProofKeys {
  const keys = new Map<string, KeptKey>();
  return {
    claims(proof, headerEnd, now) {
      const kept = keys.get(proof.slice(0, headerEnd));
      return kept === undefined ? undefined : { payload: claimsSignedBy(kept, proof, headerEnd, now), jkt: kept.jkt };
    },
    keep(encodedHeader, alg, key, jkt) {
      const signature = SIGNATURES[alg];
      if (signature === undefined || !(key instanceof CryptoKey) || encodedHeader.length > MAX_KEPT_HEADER_LENGTH) return;
      if (keys.size >= maxKeys) keys.delete(keys.keys().next().value!);
      keys.set(encodedHeader, { key: KeyObject.from(key), signature, jkt });
    },
  };
}

/** The plain path: no key is kept, jose verifies every proof. */
export const NO_KEPT_KEYS: KeptProofKeys = { claims: () => undefined, keep() {} };
