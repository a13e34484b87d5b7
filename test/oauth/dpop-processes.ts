/**
 * A DPoP proof's `jti` is refused the second time across processes (RFC 9449 §11.1): the same
 * proof sent at once to two `stride serve` processes sharing one database is accepted by exactly
 * one of them (store/dpop-proofs.ts: the table's unique key decides). Run by
 * test/processes.test.ts on each database, on the processes it shares between such files.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { tokenKey } from '../../src/security/secrets.js';
import { seedClient } from '../support/fault-load.js';
import { PAIR_PUBLIC_URL, type ServerPair } from '../support/server-pair.js';

const ROUNDS = 10;

export function dpopAcrossProcesses(pair: () => ServerPair): void {
  it('accepts a proof once when it is sent at once to two processes', async () => {
    const { database, origins } = pair();
    const seeded = await seedClient(database.db, 1);
    const keys = await generateKeyPair('ES256');
    const jwk = await exportJWK(keys.publicKey);
    await database.db.kysely.updateTable('access_tokens').set({ jkt: await calculateJwkThumbprint(jwk) }).where('token_key', '=', tokenKey(seeded.accessToken)).execute();

    const ath = createHash('sha256').update(seeded.accessToken).digest('base64url');
    for (let round = 0; round < ROUNDS; round++) {
      // Both processes name themselves PAIR_PUBLIC_URL, so the proof's htu fits either.
      const proof = await new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'GET', htu: `${PAIR_PUBLIC_URL}/v1/users/me`, ath })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(keys.privateKey);
      const answers = await Promise.all(
        origins.map(async (origin) => {
          const answer = await fetch(`${origin}/v1/users/me`, { headers: { authorization: `DPoP ${seeded.accessToken}`, dpop: proof } });
          return `${answer.status} ${await answer.text()}`;
        }),
      );
      assert.deepEqual(answers.map((answer) => answer.slice(0, 3)).sort(), ['200', '401'], answers.join('\n'));
      assert.match(answers.find((answer) => answer.startsWith('401'))!, /invalid_dpop_proof/);
    }
  });
}
