/**
 * The DPoP keys kept by header (src/oauth/dpop-kept-keys.ts) against the plain path (jose verifies
 * every proof): random sequences of valid and invalid proofs — a tampered signature, a header whose
 * key did not sign, the wrong htm or htu, an iat out of the window, nbf or exp, the same header with
 * another proof's signature, claims that are no JSON object — get the same verdict and the same
 * claims both ways, the kept keys remembering every proof before.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, it } from 'node:test';
import fc from 'fast-check';
import { CompactSign, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { ApiError } from '../../src/errors.js';
import { keptProofKeys, NO_KEPT_KEYS, type KeptProofKeys } from '../../src/oauth/dpop-kept-keys.js';
import { accessTokenHash, checkProof, verifiedClaims, type ProofCheck } from '../../src/oauth/dpop.js';
import { propertyRuns } from './runs.js';

const NOW = 1_800_000_000;
const URL_OF_API = 'https://stride.test/v1/users/me';
const TOKEN = 'an-access-token';

interface Signer {
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

/** Two keys of each algorithm: the second signs when the header names the first and another key signs. */
const ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'PS256', 'RS256'];
let signers: Signer[] = [];

before(async () => {
  signers = await Promise.all(
    [...ALGORITHMS, ...ALGORITHMS].map(async (alg) => {
      const { privateKey, publicKey } = await generateKeyPair(alg, { crv: alg === 'EdDSA' ? 'Ed25519' : undefined, modulusLength: 2048 });
      return { alg, privateKey, jwk: await exportJWK(publicKey) };
    }),
  );
});

const encoder = new TextEncoder();

/** Claims near the edges of each check: mostly a valid proof, each member sometimes wrong or missing. */
const claims = fc.record(
  {
    jti: fc.oneof({ weight: 8, arbitrary: fc.constant('new') }, { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(257), 42) }),
    htm: fc.oneof({ weight: 6, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constantFrom('POST', 'get', null) }),
    htu: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(URL_OF_API, `${URL_OF_API}?a=1`, 'https://STRIDE.test:443/v1/users/me') },
      { weight: 1, arbitrary: fc.constantFrom('https://stride.test/v1/users/me/', 'https://user@stride.test/v1/users/me', ' https://stride.test/v1/users/me', 7) },
    ),
    iat: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -70, max: 70 }).map((d) => NOW + d) }, { weight: 1, arbitrary: fc.constantFrom(`${NOW}`, NOW + 0.5, null) }),
    ath: fc.oneof({ weight: 6, arbitrary: fc.constant(accessTokenHash(TOKEN)) }, { weight: 1, arbitrary: fc.constantFrom(accessTokenHash('another'), 'x') }),
    nbf: fc.option(fc.oneof(fc.integer({ min: -2, max: 2 }).map((d) => NOW + d), fc.constant('soon')), { freq: 6, nil: undefined }),
    exp: fc.option(fc.oneof(fc.integer({ min: -2, max: 2 }).map((d) => NOW + d), fc.constant('later')), { freq: 6, nil: undefined }),
  },
);

/** The payload's bytes: the claims as JSON, or now and then something that is no claims set. */
const payload = fc.oneof(
  { weight: 12, arbitrary: claims.map((c) => encoder.encode(JSON.stringify(c.jti === 'new' ? { ...c, jti: randomUUID() } : c))) },
  { weight: 1, arbitrary: fc.constantFrom('[1,2]', 'null', '"text"', '{"iat":', '7').map((text) => encoder.encode(text)) },
  { weight: 1, arbitrary: fc.constant(Uint8Array.of(0x7b, 0xff, 0x7d)) },
);

/** One proof of a sequence: who signs, under whose header, and what is done to it after. */
const proofSpec = fc.record({
  /** Mostly the first key, as a client sends its proofs; any other now and then. */
  headerKey: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.nat({ max: ALGORITHMS.length - 1 }) }),
  /** Another key signs now and then: the header's key did not make the signature. */
  signedByOther: fc.nat({ max: 12 }).map((n) => (n === 0 ? 1 : 0)),
  typ: fc.oneof({ weight: 12, arbitrary: fc.constant('dpop+jwt') }, { weight: 1, arbitrary: fc.constant('JWT') }),
  payload,
  tamper: fc.oneof({ weight: 8, arbitrary: fc.constant('none' as const) }, { weight: 1, arbitrary: fc.constantFrom('flip-signature' as const, 'signature-of-before' as const, 'truncate-signature' as const) }),
  at: fc.nat(),
});

/** A sequence starts as a client does, with a valid proof of the first key, so that its header is kept. */
const firstProof = fc.constant(null).map(() => ({
  headerKey: 0,
  signedByOther: 0,
  typ: 'dpop+jwt',
  payload: encoder.encode(JSON.stringify({ jti: randomUUID(), htm: 'GET', htu: URL_OF_API, iat: NOW, ath: accessTokenHash(TOKEN) })),
  tamper: 'none' as const,
  at: 0,
}));

async function sign(spec: { headerKey: number; signedByOther: number; typ: string; payload: Uint8Array }): Promise<string> {
  const header = signers[spec.headerKey]!;
  const signer = signers[spec.headerKey + spec.signedByOther * ALGORITHMS.length]!;
  return new CompactSign(spec.payload).setProtectedHeader({ alg: header.alg, typ: spec.typ, jwk: header.jwk }).sign(signer.privateKey);
}

function flipped(text: string, at: number): string {
  const i = at % text.length;
  const replacement = text[i] === 'A' ? 'B' : 'A';
  return text.slice(0, i) + replacement + text.slice(i + 1);
}

/** A verdict as the client sees it: the claims and what checkProof answers, or its error. */
async function verdict(proof: string, keys: KeptProofKeys) {
  const check: ProofCheck = { method: 'GET', url: URL_OF_API, accessToken: TOKEN, status: 401 };
  const claims = await verifiedClaims(proof, check, NOW, keys).then(
    (verified) => ({ claims: verified.payload, jkt: verified.jkt }),
    (error: unknown) => ({ refused: error instanceof ApiError ? error.message : 'refused' }),
  );
  const checked = await checkProof({ clock: () => NOW }, proof, check, keys).then(
    (proofChecked) => ({ checked: proofChecked }),
    (error: unknown) => {
      assert.ok(error instanceof ApiError, `an ApiError, not ${String(error)}`);
      return { error: error.error, description: error.description, status: error.status, headers: error.headers };
    },
  );
  return { claims, checked };
}

it('gives every proof of a sequence the same verdict and claims with kept keys as jose alone', async () => {
  let keptAnswers = 0;
  let proofs = 0;
  await fc.assert(
    fc.asyncProperty(fc.tuple(firstProof, fc.array(proofSpec, { maxLength: 10 })), async ([first, rest]) => {
      const specs = [first, ...rest];
      const kept = keptProofKeys();
      // Counts the proofs the kept path answered, so that the property is known to reach it.
      const counted: KeptProofKeys = {
        claims: (...args) => {
          const answer = kept.claims(...args);
          if (answer !== undefined) keptAnswers++;
          return answer;
        },
        keep: (...args) => kept.keep(...args),
      };
      const sent: string[] = [];
      for (const spec of specs) {
        let proof = await sign(spec);
        const [head, body, signature] = proof.split('.') as [string, string, string];
        const before = sent.find((earlier) => earlier.startsWith(`${head}.`) && earlier !== proof);
        if (spec.tamper === 'flip-signature') proof = `${head}.${body}.${flipped(signature, spec.at)}`;
        if (spec.tamper === 'truncate-signature') proof = `${head}.${body}.${signature.slice(0, -2)}`;
        if (spec.tamper === 'signature-of-before' && before !== undefined) proof = `${head}.${body}.${before.split('.')[2]}`;
        sent.push(proof);
        proofs++;
        assert.deepEqual(await verdict(proof, counted), await verdict(proof, NO_KEPT_KEYS), proof);
      }
    }),
    propertyRuns(60),
  );
  assert.ok(keptAnswers > proofs / 4, `the kept keys answered ${keptAnswers} of ${proofs} proofs`);
});
