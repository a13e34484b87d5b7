/**
 * The races only two `stride serve` processes on one database can show, on one pair of processes
 * per database (test/support/server-pair.ts): starting a `stride serve` costs more CPU than any of
 * these checks, so the files of such checks share their processes instead of starting a pair each.
 * Each check makes its own user, app and tokens. On SQLite: uploads to one day and overlapping
 * nights (store/steps-processes.ts, store/sleep-processes.ts) and a DPoP proof's `jti`
 * (oauth/dpop-processes.ts); on PostgreSQL: the DPoP proof and a device's pace
 * (oauth/device-processes.ts).
 */
import { after, before, describe } from 'node:test';
import { DIALECTS } from './support/databases.js';
import { startServerPair, type ServerPair } from './support/server-pair.js';
import { deviceAcrossProcesses } from './oauth/device-processes.js';
import { dpopAcrossProcesses } from './oauth/dpop-processes.js';
import { sleepAcrossProcesses } from './store/sleep-processes.js';
import { stepsAcrossProcesses } from './store/steps-processes.js';

for (const dialect of DIALECTS) {
  describe(`two stride serve processes on one database [${dialect}]`, () => {
    let pair: ServerPair | undefined;
    before(async () => {
      pair = await startServerPair(dialect);
    });
    after(() => pair?.close());
    const started = () => pair!;

    if (dialect === 'sqlite') {
      stepsAcrossProcesses(started);
      sleepAcrossProcesses(started);
    }
    dpopAcrossProcesses(started);
    if (dialect === 'postgres') deviceAcrossProcesses(started);
  });
}
