/**
 * DPoP proofs (RFC 9449, docs/oauth.md "Sender-constrained tokens (DPoP)"): verified with `jose`
 * against the public key in their header, and later proofs with the same header against that key,
 * kept (./dpop-kept-keys.ts). A valid proof is a JWT of `typ` dpop+jwt, signed with an
 * asymmetric algorithm of DPOP_ALGORITHMS, whose `htm` and `htu` name this request (§4.3: the URI
 * without query and fragment, against the server's public URL), whose `iat` is within
 * DPOP_IAT_WINDOW seconds of now, and whose `jti` was never seen before for that key — across every
 * process (store/dpop-proofs.ts). At the resource API it also carries `ath`, the hash of the
 * access token (§4.3, §7). When the server asks for nonces it also carries a current `nonce` (§8).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { ApiError } from '../errors.js';
import type { AppContext } from '../context.js';
import { isOn } from '../speed-switches.js';
import { InvalidProof, keptProofKeys, NO_KEPT_KEYS, type KeptProofKeys } from './dpop-kept-keys.js';

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

/** Keys of proofs seen before (./dpop-kept-keys.ts), or none when STRIDE_PLAIN switches them off. */
export const keptKeys: KeptProofKeys = isOn('dpop-keys') ? keptProofKeys() : NO_KEPT_KEYS;

/**
 * A compact JWS: three parts of base64url, each without padding, whitespace or any other character
 * (RFC 7515 §2 and §7.1, RFC 4648 §5). jose decodes through `atob`, which would skip whitespace and
 * take padding; a proof is held to this on both paths, so that one jose would take on first use is
 * not refused later by the kept header's path, nor the other way round.
 */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The largest RSA key a proof may carry (RFC 7518 §6.3.1): a modulus of 4096 bits, and a public
 * exponent of 32 bits (keys use 65537). Checking a signature costs in proportion to the exponent's
 * length: a 3072-bit exponent makes one check about 25 times the work of a normal key's, and
 * anyone may send proofs of fresh keys to the API, before any token is looked up.
 */
const MAX_RSA_MODULUS_BYTES = 512;
const MAX_RSA_EXPONENT_BYTES = 4;

/** False when the header's `jwk` is an RSA key larger than the limits above; any other header is jose's to judge. */
function isAffordableKey(encodedHeader: string): boolean {
  let header: unknown;
  try {
    header = JSON.parse(strictUtf8.decode(Buffer.from(encodedHeader, 'base64url')));
  } catch {
    return true;
  }
  const jwk = (header as { jwk?: { kty?: unknown; n?: unknown; e?: unknown } } | null)?.jwk;
  if (jwk === null || typeof jwk !== 'object' || jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.e !== 'string') return true;
  return Buffer.from(jwk.n, 'base64url').length <= MAX_RSA_MODULUS_BYTES && Buffer.from(jwk.e, 'base64url').length <= MAX_RSA_EXPONENT_BYTES;
}

/**
 * Verifies the proof's signature and header (through a kept key when its header is one's); refuses
 * a private `jwk`. Its claims set are not yet checked against the request (checkProof does that).
 */
export async function verifiedClaims(proof: string, check: ProofCheck, now: number, keys: KeptProofKeys): Promise<{ payload: JWTPayload; jkt: string }> {
  if (!COMPACT_JWS.test(proof)) throw new InvalidProof('not three parts of base64url');
  const headerEnd = proof.indexOf('.');
  const kept = keys.claims(proof, headerEnd, now);
  if (kept !== undefined) return kept;
  const encodedHeader = proof.slice(0, headerEnd);
  if (!isAffordableKey(encodedHeader)) throw new InvalidProof('an RSA key over 4096 bits or with a public exponent over 32 bits');
  const { payload, protectedHeader, key } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS, currentDate: new Date(now * 1000) });
  const jwk = protectedHeader.jwk as JWK;
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw refuse(check, 'the jwk header of the DPoP proof must be a public key');
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  keys.keep(encodedHeader, protectedHeader.alg!, key, jkt);
  return { payload, jkt };
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

/** The characters of a URI (RFC 3986 §2): no white space, control characters or backslashes. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;
/** `scheme://authority` (RFC 3986 §3): the authority ends at the path, the query or the fragment. */
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;

/**
 * Whether a proof's `htu` is written as RFC 3986 writes the URL that the WHATWG parser (withoutQuery)
 * makes of it. That parser, kind to browsers' input, reads much that no URI is as the same URL:
 * white space around or inside it, backslashes for slashes, `http:host`, user info, and a host it
 * rewrites — an IPv4 address as one number, in octal or hex, with parts left out or a trailing dot,
 * a host percent-encoded. Only the normalisation of RFC 3986 §6.2.2–6.2.3 is left to the
 * comparison: the letter case of scheme and host, the default port, dot segments.
 */
function isSpelledAsUri(uri: string): boolean {
  if (!URI_CHARACTERS.test(uri)) return false;
  const authority = AUTHORITY.exec(uri)?.[1];
  // RFC 9110 §4.2.4: an http(s) URI with user info is an error (and can mislead about the host).
  if (authority === undefined || authority.includes('@')) return false;
  const host = authority.replace(/:[0-9]*$/, '');
  try {
    return host.toLowerCase() === new URL(uri).hostname;
  } catch {
    return false;
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

/** A proof that passed every check of RFC 9449 §4.3 but the `jti`'s: what recording it needs. */
export interface CheckedProof extends VerifiedProof {
  /** SHA-256 of the key's thumbprint and the `jti`: a jti is unique per key (§11.1). */
  proofKey: string;
  /** When the proof's `iat` has left the window (and its record may go). */
  expiresAt: number;
}

/**
 * Verifies `proof` for this request (RFC 9449 §4.3), all but the `jti` not seen before: see
 * rememberProof. `keys`: where proofs' keys are kept (the plain path's NO_KEPT_KEYS keeps none).
 */
export async function checkProof(ctx: Pick<AppContext, 'clock'>, proof: string, check: ProofCheck, keys = keptKeys): Promise<CheckedProof> {
  if (proof.length === 0 || proof.length > MAX_PROOF_LENGTH) throw refuse(check, 'the DPoP proof is empty or too long');
  const now = ctx.clock();
  let verified: Awaited<ReturnType<typeof verifiedClaims>>;
  try {
    verified = await verifiedClaims(proof, check, now, keys);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw refuse(check, `the DPoP proof must be a JWT of typ dpop+jwt signed with one of ${DPOP_ALGORITHMS.join(', ')} by the public key in its jwk header`);
  }
  const { payload, jkt } = verified;
  if (payload.htm !== check.method) throw refuse(check, `the DPoP proof's htm must be ${check.method}`);
  const expected = withoutQuery(check.url);
  if (typeof payload.htu !== 'string' || !isSpelledAsUri(payload.htu) || withoutQuery(payload.htu) !== expected) throw refuse(check, `the DPoP proof's htu must be ${expected}`);
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
  const proofKey = createHash('sha256').update(`${jkt}.${jti}`).digest('base64url');
  // The record outlives the last moment the proof's iat is accepted.
  return { jkt, proofKey, expiresAt: Math.max(iat, now) + DPOP_IAT_WINDOW + 1 };
}

/** Records a checked proof's `jti` (store/dpop-proofs.ts); refuses the proof if it was recorded before, by any process. */
export async function rememberProof(ctx: AppContext, checked: CheckedProof, check: Pick<ProofCheck, 'status' | 'challenge'>): Promise<void> {
  if (!(await ctx.stores.dpopProofs.remember(checked.proofKey, checked.expiresAt))) {
    throw refuse(check as ProofCheck, 'the DPoP proof was used before (its jti was seen)');
  }
}

/** Verifies `proof` for this request (RFC 9449 §4.3), records its `jti`, and returns its key's thumbprint. */
export async function verifyProof(ctx: AppContext, proof: string, check: ProofCheck): Promise<VerifiedProof> {
  const checked = await checkProof(ctx, proof, check);
  await rememberProof(ctx, checked, check);
  return { jkt: checked.jkt };
}
