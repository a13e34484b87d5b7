/**
 * A device's pace (RFC 8628 §3.5) holds across processes: two `stride serve` processes sharing one
 * database see each other's polls. Of two polls of one code sent at once, one to each, the
 * conditional write of the pending poll lets exactly one through (store/device-codes.ts); a poll
 * at one process right after a poll at the other is too soon (the pair's pace is 60 s). Run by
 * test/processes.test.ts on PostgreSQL, where processes of one deployment share the database (two
 * processes on one SQLite file take the same path; the single-process suites run it on both).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DEVICE_CODE_GRANT_TYPE } from '../../src/domain/apps.js';
import { seedClient } from '../support/fault-load.js';
import type { ServerPair } from '../support/server-pair.js';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

export function deviceAcrossProcesses(pair: () => ServerPair): void {
  it('paces a device polling two processes, and lets one of two simultaneous polls through', async () => {
    const { database, origins } = pair();
    const { clientId } = await seedClient(database.db, 0);
    // A device's app: public, allowed the device grant.
    await database.db.kysely
      .updateTable('apps')
      .set({ is_public: 1, client_secret_hash: null, grant_types: `authorization_code refresh_token ${DEVICE_CODE_GRANT_TYPE}` })
      .where('client_id', '=', clientId)
      .execute();

    const start = async () => {
      const answer = await fetch(`${origins[0]}/oauth2/device_authorization`, form({ client_id: clientId, scope: 'read_profile' }));
      assert.equal(answer.status, 200);
      return ((await answer.json()) as { device_code: string }).device_code;
    };
    const poll = async (origin: string, deviceCode: string) => {
      const answer = await fetch(`${origin}/oauth2/token`, form({ grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId }));
      assert.equal(answer.status, 400);
      return ((await answer.json()) as { error: string }).error;
    };

    for (let round = 0; round < 3; round++) {
      const code = await start();
      const both = await Promise.all(origins.map((origin) => poll(origin, code)));
      assert.deepEqual(both.sort(), ['authorization_pending', 'slow_down'], `round ${round}`);
    }
    const code = await start();
    assert.equal(await poll(origins[0], code), 'authorization_pending');
    assert.equal(await poll(origins[1], code), 'slow_down');
    // The interval grew for this code on both processes.
    assert.equal(await poll(origins[0], code), 'slow_down');
    const other = await start();
    assert.equal(await poll(origins[1], other), 'authorization_pending', 'another code keeps its own pace');
  });
}
