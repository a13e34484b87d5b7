/**
 * DPoP proofs (RFC 9449 §4.2) for the load driver, made fast enough that the client is not what
 * a DPoP load measures. A key's JOSE header is encoded once; each proof is then one JSON payload
 * (new `jti`, current `iat`, the request's `htm`, `htu` and, at a resource, `ath`) and one ES256
 * signature by node:crypto (IEEE P1363 r‖s, RFC 7518 §3.4). A ProofPool signs the proofs of the
 * next slice before the slice starts (Workload.prepareSlice), so the timed part of a load only
 * takes proofs off a list; if a slice uses more than were made, the rest are signed on the spot
 * and counted.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';

export interface ProofKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** base64url of the protected header: { typ: dpop+jwt, alg: ES256, jwk }. */
  encodedHeader: string;
  /** RFC 7638 SHA-256 thumbprint of the public key, base64url. */
  jkt: string;
}

export interface ProofClaims {
  htm: string;
  htu: string;
  /** base64url SHA-256 of the access token, at a resource (RFC 9449 §4.2). */
  ath?: string;
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A fresh P-256 key pair, its header encoded once. */
export function newProofKey(): ProofKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y: string };
  const jwk = { kty, crv, x, y };
  // RFC 7638 §3.2: the required members, in lexicographic order, without whitespace.
  const jkt = createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
  return { privateKey, publicKey, encodedHeader: base64url(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk })), jkt };
}

/** `ath` of RFC 9449 §4.2. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/** One compact JWS proof for `claims`, issued now. */
export function signProof(key: ProofKey, claims: ProofClaims, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const payload = { jti: randomBytes(12).toString('base64url'), iat: nowSeconds, ...claims };
  const input = `${key.encodedHeader}.${base64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** Checks a proof's ES256 signature with the key's public half: the floor of a server's work. */
export function verifySignature(proof: string, publicKey: KeyObject): boolean {
  const dot = proof.lastIndexOf('.');
  return verify('sha256', Buffer.from(proof.slice(0, dot)), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(proof.slice(dot + 1), 'base64url'));
}

/** Proofs for one key and one request, made ahead; `take()` never repeats one. */
export class ProofPool {
  #ready: string[] = [];
  /** Proofs `take()` had to sign itself because the pool was empty. */
  signedLate = 0;

  constructor(
    readonly key: ProofKey,
    readonly claims: ProofClaims,
  ) {}

  get size(): number {
    return this.#ready.length;
  }

  /** Signs proofs until `count` are ready (older ones are dropped first: their iat ages). */
  refill(count: number): void {
    this.#ready = [];
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < count; i++) this.#ready.push(signProof(this.key, this.claims, now));
  }

  take(): string {
    const proof = this.#ready.pop();
    if (proof !== undefined) return proof;
    this.signedLate++;
    return signProof(this.key, this.claims);
  }
}

/**
 * How many proofs a slice of `seconds` will use: the rate seen so far with half again as many
 * to spare, or `initialRate` before any measurement.
 */
export function proofsForSlice(seconds: number, seenOk: number, seenSeconds: number, initialRate: number): number {
  const rate = seenSeconds > 0 ? seenOk / seenSeconds : initialRate;
  return Math.ceil(Math.max(rate, 100) * seconds * 1.5);
}
