/**
 * A DPoP proof's `jti` is refused the second time across processes (RFC 9449 §11.1): the same
 * proof sent at once to two `stride serve` processes sharing one database is accepted by exactly
 * one of them (store/dpop-proofs.ts: the table's unique key decides).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { after, it } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { tokenKey } from '../../src/security/secrets.js';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../support/databases.js';
import { freePort, startServer } from '../support/cli.js';
import { seedClient } from '../support/fault-load.js';

const ROUNDS = 10;
/** Both processes name themselves alike, so one proof's htu fits either. */
const PUBLIC_URL = 'http://stride.test';

const servers: ChildProcess[] = [];
const databases: TestDatabase[] = [];
after(async () => {
  for (const server of servers) server.kill('SIGKILL');
  for (const database of databases) await database.drop();
});

for (const dialect of DIALECTS) {
  it(`accepts a proof once when it is sent at once to two processes [${dialect}]`, async () => {
    const database = await createTestDatabase(dialect);
    databases.push(database);
    const seeded = await seedClient(database.db, 1);
    const keys = await generateKeyPair('ES256');
    const jwk = await exportJWK(keys.publicKey);
    await database.db.kysely.updateTable('access_tokens').set({ jkt: await calculateJwkThumbprint(jwk) }).where('token_key', '=', tokenKey(seeded.accessToken)).execute();
    await database.db.close();

    const origins: string[] = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      origins.push(`http://127.0.0.1:${port}`);
      servers.push(await startServer(port, { DATABASE_URL: database.url, PUBLIC_URL, RATE_LIMIT: 'off' }));
    }
    const ath = createHash('sha256').update(seeded.accessToken).digest('base64url');
    for (let round = 0; round < ROUNDS; round++) {
      const proof = await new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'GET', htu: `${PUBLIC_URL}/v1/users/me`, ath })
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
