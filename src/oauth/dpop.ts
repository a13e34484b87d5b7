/**
 * DPoP proofs (RFC 9449, docs/oauth.md "Sender-constrained tokens (DPoP)"): verified with `jose`
 * against the public key in their header. A valid proof is a JWT of `typ` dpop+jwt, signed with an
 * asymmetric algorithm of DPOP_ALGORITHMS, whose `htm` and `htu` name this request (§4.3: the URI
 * without query and fragment, against the server's public URL), whose `iat` is within
 * DPOP_IAT_WINDOW seconds of now, and whose `jti` was never seen before for that key — across every
 * process (store/dpop-proofs.ts). At the resource API it also carries `ath`, the hash of the
 * access token (§4.3, §7). When the server asks for nonces it also carries a current `nonce` (§8).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import { ApiError } from '../errors.js';
import type { AppContext } from '../context.js';

/** Exactly the algorithms accepted, and advertised as `dpop_signing_alg_values_supported`. */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256'];

/** How far a proof's `iat` may be from the server's clock, either way (seconds). */
export const DPOP_IAT_WINDOW = 60;

/** How long one nonce is handed out before the next (seconds); the previous one stays valid too. */
export const DPOP_NONCE_PERIOD = 60;

/** A proof header longer than this is refused before any parsing. */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;

/** The JWK members of private keys (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface ProofCheck {
  /** The request's method. */
  method: string;
  /** The request's URI as the server's public URL names it; query and fragment are ignored. */
  url: string;
  /** At the resource API: the access token the proof must be bound to with `ath`. */
  accessToken?: string;
  /** The key for nonces when the server asks for them (DPOP_NONCE=true); undefined otherwise. */
  nonceKey?: Buffer;
  /** 400 at the token endpoint, 401 at the resource API (RFC 9449 §7.1). */
  status: 400 | 401;
  /** The challenge the resource API adds to the error (`WWW-Authenticate`). */
  challenge?: (error: string, description: string) => string;
}

export interface VerifiedProof {
  /** RFC 7638 thumbprint (SHA-256, base64url) of the proof's key. */
  jkt: string;
}

/** Proof keys kept imported, at most; beyond, the oldest is let go. */
const MAX_CACHED_KEYS = 10_000;

interface CachedKey {
  key: ReturnType<typeof EmbeddedJWK>;
  jkt?: Promise<string>;
}

/**
 * A client signs every proof with the same key (RFC 9449 §2), and importing it from the `jwk`
 * header costs several times the signature check. The key jose's EmbeddedJWK imported (after its
 * checks) is kept by the exact `alg` and `jwk` of the header, with its thumbprint: the same header
 * always gives the same key, and the signature is still checked on every proof.
 */
const importedKeys = new Map<string, CachedKey>();

/** What a cached key is found by: the header's exact `alg` and `jwk`; undefined without them. */
function cacheKeyOf(header: JWSHeaderParameters): string | undefined {
  if (typeof header.alg !== 'string' || header.jwk === null || typeof header.jwk !== 'object') return undefined;
  return `${header.alg}.${JSON.stringify(header.jwk)}`;
}

/** EmbeddedJWK, through the cache of imported keys. */
function embeddedKey(header: JWSHeaderParameters, token: FlattenedJWSInput): ReturnType<typeof EmbeddedJWK> {
  const cacheKey = cacheKeyOf(header);
  const cached = cacheKey === undefined ? undefined : importedKeys.get(cacheKey);
  if (cached) return cached.key;
  const key = EmbeddedJWK(header, token);
  if (cacheKey !== undefined) {
    if (importedKeys.size >= MAX_CACHED_KEYS) importedKeys.delete(importedKeys.keys().next().value!);
    importedKeys.set(cacheKey, { key });
    // A key jose refused is not kept.
    key.catch(() => importedKeys.delete(cacheKey));
  }
  return key;
}

/** The RFC 7638 thumbprint of a verified proof's key, computed once per cached key. */
function thumbprint(header: JWSHeaderParameters, jwk: JWK): Promise<string> {
  const cacheKey = cacheKeyOf(header);
  const cached = cacheKey === undefined ? undefined : importedKeys.get(cacheKey);
  if (!cached) return calculateJwkThumbprint(jwk, 'sha256');
  cached.jkt ??= calculateJwkThumbprint(jwk, 'sha256');
  return cached.jkt;
}

/** `htu` and the request's URI compared as RFC 9449 §4.3 says: no query, no fragment, normalised. */
export function withoutQuery(uri: string): string | null {
  try {
    const url = new URL(uri);
    return `${url.origin}${url.pathname}`;
  } catch {
    return null;
  }
}

/** base64url(SHA-256(access token)), the `ath` of RFC 9449 §4.2. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/** The nonce of the period `slot`: its number and an HMAC of it, so any process can check it. */
function nonceOf(key: Buffer, slot: number): string {
  const mac = createHmac('sha256', key).update(`dpop-nonce:${slot}`).digest().subarray(0, 16).toString('base64url');
  return `${slot.toString(36)}.${mac}`;
}

/** The nonce to hand out now (`DPoP-Nonce`, RFC 9449 §8): it changes every DPOP_NONCE_PERIOD seconds. */
export function currentNonce(key: Buffer, now: number): string {
  return nonceOf(key, Math.floor(now / DPOP_NONCE_PERIOD));
}

/** The current nonce or the previous one, so a client mid-request when it changes is not refused. */
export function isValidNonce(key: Buffer, nonce: unknown, now: number): boolean {
  if (typeof nonce !== 'string' || nonce.length > 64) return false;
  const slot = Math.floor(now / DPOP_NONCE_PERIOD);
  const given = Buffer.from(nonce);
  return [slot, slot - 1].some((s) => {
    const expected = Buffer.from(nonceOf(key, s));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

function refuse(check: ProofCheck, description: string): ApiError {
  const headers: Record<string, string> = check.challenge ? { 'www-authenticate': check.challenge('invalid_dpop_proof', description) } : {};
  return new ApiError('invalid_dpop_proof', description, headers, check.status);
}

/**
 * The request's one `DPoP` header (RFC 9449 §4.3: more than one is an error); undefined when there
 * is none.
 */
export function proofHeader(headers: Record<string, string | string[] | undefined>, check: Pick<ProofCheck, 'status' | 'challenge'>): string | undefined {
  const value = headers.dpop;
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.includes(',')) throw refuse(check as ProofCheck, 'the request must carry exactly one DPoP header');
  return value;
}

/** Verifies `proof` for this request (RFC 9449 §4.3), records its `jti`, and returns its key's thumbprint. */
export async function verifyProof(ctx: AppContext, proof: string, check: ProofCheck): Promise<VerifiedProof> {
  if (proof.length === 0 || proof.length > MAX_PROOF_LENGTH) throw refuse(check, 'the DPoP proof is empty or too long');
  const now = ctx.clock();
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    verified = await jwtVerify(proof, embeddedKey, { typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS, currentDate: new Date(now * 1000) });
  } catch {
    throw refuse(check, `the DPoP proof must be a JWT of typ dpop+jwt signed with one of ${DPOP_ALGORITHMS.join(', ')} by the public key in its jwk header`);
  }
  const { payload, protectedHeader } = verified;
  const jwk = protectedHeader.jwk as JWK;
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw refuse(check, 'the jwk header of the DPoP proof must be a public key');
  if (payload.htm !== check.method) throw refuse(check, `the DPoP proof's htm must be ${check.method}`);
  const expected = withoutQuery(check.url);
  if (typeof payload.htu !== 'string' || withoutQuery(payload.htu) !== expected) throw refuse(check, `the DPoP proof's htu must be ${expected}`);
  const iat = payload.iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > DPOP_IAT_WINDOW) {
    throw refuse(check, `the DPoP proof's iat must be within ${DPOP_IAT_WINDOW} seconds of the server's time`);
  }
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw refuse(check, 'the DPoP proof must carry a jti');
  if (check.accessToken !== undefined && payload.ath !== accessTokenHash(check.accessToken)) {
    throw refuse(check, "the DPoP proof's ath must be the base64url SHA-256 of the access token");
  }
  if (check.nonceKey !== undefined && !isValidNonce(check.nonceKey, payload.nonce, now)) {
    const description = 'the DPoP proof must carry the nonce of the DPoP-Nonce header';
    const headers: Record<string, string> = { 'dpop-nonce': currentNonce(check.nonceKey, now) };
    if (check.challenge) headers['www-authenticate'] = check.challenge('use_dpop_nonce', description);
    throw new ApiError('use_dpop_nonce', description, headers, check.status);
  }
  const jkt = await thumbprint(protectedHeader, jwk);
  // A jti is unique per key; the row outlives the last moment the proof's iat is accepted.
  const proofKey = createHash('sha256').update(`${jkt}.${jti}`).digest('base64url');
  if (!(await ctx.stores.dpopProofs.remember(proofKey, Math.max(iat, now) + DPOP_IAT_WINDOW + 1))) {
    throw refuse(check, 'the DPoP proof was used before (its jti was seen)');
  }
  return { jkt };
}
