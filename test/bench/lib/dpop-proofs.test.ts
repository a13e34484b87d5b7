import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import { accessTokenHash, newProofKey, ProofPool, proofsForSlice, signProof, verifySignature } from '../../../bench/lib/dpop-proofs.js';
import { fixedRequestWorkload, interleave, refreshChainWorkload, type Workload } from '../../../bench/lib/loads.js';

const HTU = 'http://127.0.0.1:8080/v1/users/me';

describe('DPoP proofs of the load driver', () => {
  it('signs a proof jose verifies against its embedded key, with the claims of RFC 9449 §4.2', async () => {
    const key = newProofKey();
    const ath = accessTokenHash('an-access-token');
    const now = Math.floor(Date.now() / 1000);
    const { payload, protectedHeader } = await jwtVerify(signProof(key, { htm: 'GET', htu: HTU, ath }), EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256'] });
    assert.equal(payload.htm, 'GET');
    assert.equal(payload.htu, HTU);
    assert.equal(payload.ath, ath);
    assert.ok(typeof payload.jti === 'string' && payload.jti.length >= 16);
    assert.ok(Math.abs((payload.iat as number) - now) <= 1);
    const jwk = protectedHeader.jwk as JWK;
    assert.equal('d' in jwk, false, 'only the public key is in the header');
    assert.equal(key.jkt, await calculateJwkThumbprint(jwk, 'sha256'));
  });

  it('checks signatures: a changed payload or another key does not verify', () => {
    const key = newProofKey();
    const proof = signProof(key, { htm: 'POST', htu: HTU });
    assert.equal(verifySignature(proof, key.publicKey), true);
    const [header, payload, signature] = proof.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...claims, htm: 'GET' })).toString('base64url');
    assert.equal(verifySignature(`${header}.${altered}.${signature}`, key.publicKey), false);
    assert.equal(verifySignature(proof, newProofKey().publicKey), false);
  });

  it('hands out each pooled proof once, then signs on the spot and counts it', () => {
    const pool = new ProofPool(newProofKey(), { htm: 'GET', htu: HTU });
    pool.refill(50);
    assert.equal(pool.size, 50);
    const jtis = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const proof = pool.take();
      jtis.add((JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti);
    }
    assert.equal(jtis.size, 60, 'no jti twice');
    assert.equal(pool.signedLate, 10);
    pool.refill(5);
    assert.equal(pool.size, 5, 'a refill starts afresh');
  });

  it('sizes a slice’s pool by the rate seen, half again, and at least 100 a second', () => {
    assert.equal(proofsForSlice(2, 0, 0, 4000), 12_000);
    assert.equal(proofsForSlice(2, 3000, 2, 4000), 4500);
    assert.equal(proofsForSlice(2, 10, 2, 4000), 300);
  });
});

describe('a fixed request with a new DPoP proof each time', () => {
  let server: Server;
  let origin: string;
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(String(req.headers.dpop));
      res.end(req.headers.authorization === 'DPoP t' ? '{}' : 'no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends every request with a proof of its own, signed before the slice', async () => {
    const key = newProofKey();
    const pool = new ProofPool(key, { htm: 'GET', htu: `${origin}/`, ath: accessTokenHash('t') });
    const workload = fixedRequestWorkload(`${origin}/`, { authorization: 'DPoP t' }, 2, process.pid, undefined, pool);
    const [m] = await interleave([workload], { connections: 2, warmupSeconds: 0, durationSeconds: 0.5 }, 0.5);
    assert.ok(m!.ok > 0 && m!.failed === 0, `${m!.ok} answers, ${m!.failed} failed`);
    assert.ok(seen.length >= m!.ok);
    assert.equal(new Set(seen).size, seen.length, 'no proof sent twice');
    assert.ok(seen.every((proof) => verifySignature(proof, key.publicKey)));
    // How long the pool lasts depends on this machine's speed (a row's note reports the late ones);
    // what must hold is that the slice took proofs signed before it.
    assert.ok(pool.signedLate < seen.length, `${pool.signedLate} of ${seen.length} proofs signed during the slice: none came from the pool`);
  });
});

describe('DPoP-bound refresh chains', () => {
  let server: Server;
  let origin: string;

  before(async () => {
    // A token endpoint that answers each rotation after 5 ms: at most 800 a second on 4 chains.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => setTimeout(() => res.end(JSON.stringify({ refresh_token: `rt-${Math.random()}` })), 5));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs the first slice\'s proofs for the rate of the warm-up, not a guess', async () => {
    const pool = new ProofPool(newProofKey(), { htm: 'POST', htu: `${origin}/token` });
    const client = { clientId: 'c', clientSecret: '', redirectUri: 'http://127.0.0.1:9/' };
    const workload = refreshChainWorkload({ tokenUrl: `${origin}/token`, client, proofs: pool }, async (count) => Array.from({ length: count }, (_, i) => `first-${i}`), 4, process.pid);
    await workload.prepareSlice!(0.4);
    await workload.warmUp(0.4);
    await workload.prepareSlice!(1);
    workload.close!();
    const { warmupOk = 0 } = workload.result();
    assert.ok(warmupOk > 0);
    // The warm-up's rate, half again: between its answers over 1 s and over its 0.4 s (the
    // initial guess of 1,000 a second would make 1,500).
    assert.ok(pool.size >= Math.ceil(Math.max(warmupOk, 100) * 1.5) && pool.size <= Math.ceil(Math.max(warmupOk / 0.4, 100) * 1.5), `${pool.size} proofs for ${warmupOk} rotations in the warm-up`);
  });
});

describe('interleave and the work before a slice', () => {
  it('prepares each workload before its warm-up and before each of its slices', async () => {
    const order: string[] = [];
    const workload = (name: string): Workload => ({
      pid: null,
      prepareSlice: (seconds) => void order.push(`${name} prepare ${seconds}`),
      warmUp: async () => void order.push(`${name} warm-up`),
      runSlice: async () => void order.push(`${name} slice`),
      result: () => ({ rate: 1, p50: 1, p99: 1, ok: 1, failed: 0, seconds: 1 }),
    });
    await interleave([workload('a'), workload('b')], { connections: 1, warmupSeconds: 1, durationSeconds: 4 });
    assert.deepEqual(order, [
      'a prepare 1', 'a warm-up', 'b prepare 1', 'b warm-up',
      'a prepare 2', 'a slice', 'b prepare 2', 'b slice',
      'a prepare 2', 'a slice', 'b prepare 2', 'b slice',
    ]);
  });
});
