/** Credentials (src/security/secrets.ts) and the Argon2id concurrency cap (src/security/passwords.ts). */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { it } from 'node:test';
import { argon2Slots, hashPassword, Semaphore, verifyAgainstDummy, verifyPassword } from '../../src/security/passwords.js';
import { constantTimeEqual, CREDENTIAL_PREFIX, hashCredential, newCredential, newTokenPair, tokenKey } from '../../src/security/secrets.js';

it('newTokenPair: two independent 256-bit tokens with their prefixes and issue time', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const before = Date.now();
    const { accessToken, refreshToken } = newTokenPair();
    assert.ok(accessToken.startsWith(CREDENTIAL_PREFIX.accessToken));
    assert.ok(refreshToken.startsWith(CREDENTIAL_PREFIX.refreshToken));
    for (const token of [accessToken, refreshToken]) {
      const issuedAt = parseInt(token.slice(4, 16), 16);
      assert.ok(issuedAt >= before && issuedAt <= Date.now(), `issue time in ${token}`);
    }
    const a = Buffer.from(accessToken.slice(16), 'base64url');
    const r = Buffer.from(refreshToken.slice(16), 'base64url');
    assert.equal(a.length, 32);
    assert.equal(r.length, 32);
    assert.ok(!a.equals(r));
    seen.add(accessToken).add(refreshToken);
  }
  assert.equal(seen.size, 400);
});

it('tokenKey: the issue time then the SHA-256 of the token; later tokens sort after earlier ones', () => {
  const older = newTokenPair(1_700_000_000_000).refreshToken;
  const newer = newTokenPair(1_700_000_000_001).refreshToken;
  assert.equal(tokenKey(older), older.slice(4, 16) + createHash('sha256').update(older).digest('hex'));
  assert.ok(tokenKey(older) < tokenKey(newer), 'keys grow with the issue time');
  assert.ok(!tokenKey(older).includes(older.slice(16)), 'the random part is never in the key');
  // Anything else has a key no issued token has: no issue-time digits, or another hash.
  for (const odd of ['srt_nope', 'srt_\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000x', 'srt_0123456789AB', '']) {
    assert.match(tokenKey(odd), /^-{12}[0-9a-f]{64}$/, JSON.stringify(odd));
  }
  assert.notEqual(tokenKey(older.slice(0, -1) + (older.endsWith('A') ? 'B' : 'A')), tokenKey(older));
});

it('hashCredential is the hex SHA-256 of the credential', () => {
  for (const value of ['', 'sat_abc', 'é unicode']) {
    assert.equal(hashCredential(value), createHash('sha256').update(value).digest('hex'));
  }
});

it('constantTimeEqual: true for the same text only, whatever the lengths and characters', () => {
  const secret = newCredential('clientSecret');
  assert.equal(constantTimeEqual(secret, `${secret}`), true);
  assert.equal(constantTimeEqual('', ''), true);
  assert.equal(constantTimeEqual('é∂ ünicode 😀', 'é∂ ünicode 😀'), true);
  for (const other of [secret.slice(0, -1), `${secret}x`, secret.toUpperCase(), newCredential('clientSecret'), '', 'é', 'e\u0301']) {
    assert.equal(constantTimeEqual(secret, other), false, other);
  }
  // Texts whose latin1 bytes would be the same: the texts are compared, not a byte of each character.
  assert.equal(constantTimeEqual('\u0100', '\u0000'), false);
});

it('Semaphore: never more than the limit at once, waiters in order, a failure frees its slot', async () => {
  const semaphore = new Semaphore(2);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const task = (i: number) => semaphore.run(async () => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    order.push(i);
    if (i === 1) throw new Error('boom');
    return i;
  });
  const results = await Promise.allSettled(Array.from({ length: 7 }, (_, i) => task(i)));
  assert.equal(peak, 2);
  assert.equal(results[1]!.status, 'rejected');
  assert.deepEqual(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value), [0, 2, 3, 4, 5, 6]);
  assert.deepEqual(order.slice(2), [2, 3, 4, 5, 6]);
  assert.equal(semaphore.active, 0);
  assert.equal(semaphore.queued, 0);
  assert.throws(() => new Semaphore(0), RangeError);
});

it('Argon2id work is capped at one per core plus one waiting on the pool (other work on the pool waits behind no more hashes), with the same results', async () => {
  assert.equal(argon2Slots.limit, availableParallelism() + 1);
  const stored = await hashPassword('correct horse battery');
  assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  // Seen from outside the semaphore, through libuv's thread pool, which runs the hashes and the
  // process's other work (files, DNS lookups) in the order it was queued: a stat queued right
  // after a burst of hashes waits behind only those the cap admitted. Without the cap the whole
  // burst would be queued ahead of it, and it would come back after all but the last few.
  const poolThreads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const burst = 2 * (argon2Slots.limit + poolThreads);
  const finished: string[] = [];
  const done = <T>(what: string) => (value: T) => {
    finished.push(what);
    return value;
  };
  const checks = Promise.all([
    ...Array.from({ length: burst }, () => verifyPassword(stored, 'correct horse battery')),
    verifyPassword(stored, 'wrong'),
    verifyPassword('not a hash', 'x'),
    verifyAgainstDummy('x'),
  ].map((check) => check.then(done('hash'))));
  const probe = stat(process.cwd()).then(done('stat'));
  assert.deepEqual(await checks, [...Array.from({ length: burst }, () => true), false, false, false]);
  await probe;
  const ahead = finished.indexOf('stat');
  assert.ok(ahead <= argon2Slots.limit, `the stat came back after ${ahead} of ${burst + 3} hashes; the cap admits ${argon2Slots.limit} at a time`);
  assert.equal(argon2Slots.active, 0);
  assert.equal(argon2Slots.queued, 0);
});

it('freshRandomBytes: distinct draws of any size, across refills of the block', async () => {
  const { freshRandomBytes } = await import('../../src/security/secrets.js');
  const seen = new Set<string>();
  let total = 0;
  for (let i = 0; i < 500; i++) {
    for (const size of [12, 64, 33]) {
      const bytes = freshRandomBytes(size);
      assert.equal(bytes.length, size);
      total += size;
      seen.add(bytes.toString('hex'));
    }
  }
  assert.equal(seen.size, 1500, `${total} bytes over several 4 KiB blocks, all distinct draws`);
  const big = freshRandomBytes(4096);
  assert.equal(big.length, 4096);
  // Not all zero: a refill happened and the copy is of filled bytes.
  assert.ok(freshRandomBytes(64).some((b) => b !== 0));
});
