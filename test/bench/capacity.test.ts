import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runCapacity, type CapacityOptions } from '../../bench/capacity/capacity.js';
import { missing } from '../support/dependencies.js';
import { postgresClusterUnavailable } from '../support/postgres-cluster.js';

/** Processes whose command line names one of the capacity run's folders (its postgres, replica, pgbouncer). */
function capacityProcesses(): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (command.includes('stride-capacity-')) found.push(`${name}: ${command}`);
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** The run's own PgBouncer, at the path the run starts it from. */
function pgbouncerMissing(): string | null {
  const binary = process.env.CAPACITY_PGBOUNCER ?? '/usr/sbin/pgbouncer';
  return existsSync(binary) ? null : missing(`no pgbouncer at ${binary} (apt-get install pgbouncer, or set CAPACITY_PGBOUNCER)`);
}

const SMALL: CapacityOptions = {
  people: 3,
  rates: [30],
  stepSeconds: 4,
  targetSeconds: 4,
  feedPerSecond: 2,
  // A shared test machine: the small run checks the driver, not the latency targets.
  limits: { uploadP99Ms: 5000, readP99Ms: 5000 },
};

describe('the capacity run, small', { skip: postgresClusterUnavailable() ?? pgbouncerMissing() ?? false }, () => {
  it('syncs a few people through two Stride processes, PgBouncer and a replica, and reports what it cost', async () => {
    const report = await runCapacity(SMALL);
    const [step] = report.steps;
    assert.equal(report.errors, 0, JSON.stringify(step?.errorSamples));
    assert.ok(report.uploads > 50, `${report.uploads} uploads`);
    // Paced, not flooded: never above the target; below it only by the syncs a busy person skipped.
    assert.ok(step!.uploads.perSecond > 5 && step!.uploads.perSecond <= 36, JSON.stringify(step));
    assert.ok(report.reads > 0 && step!.reads.p50Ms > 0 && step!.reads.p99Ms >= step!.reads.p50Ms);
    assert.ok(step!.uploads.p50Ms > 0 && step!.uploads.p99Ms >= step!.uploads.p50Ms);
    assert.ok(report.personDays > 0);
    // Each upload writes a day row and an event: at least a few hundred bytes of WAL.
    assert.ok(report.walBytesPerUpload > 200, `${report.walBytesPerUpload} WAL bytes per upload`);
    assert.ok(report.primaryCpuMsPerUpload > 0);
    // The primary's profile names its statements: every upload writes a day row of the series.
    const dayWrites = report.primaryStatements.find((cost) => /insert into "?series_days"?/i.test(cost.query));
    assert.ok(dayWrites && dayWrites.callsPerUpload > 0.3 && dayWrites.msPerUpload > 0, JSON.stringify(report.primaryStatements));
    assert.ok(report.profile.ms.stride > 0 && report.profile.ms.pgbouncer >= 0 && report.profile.ms.driver > 0);
    assert.ok(report.growthPerPersonDay.data.series_days! > 0, JSON.stringify(report.growthPerPersonDay));
    // Events grow by whole pages, and a small run's (about 90 bytes a row) may fit in the page its
    // day's partition had already: that they were written shows in the sweep that drops them.
    assert.ok(report.growthPerPersonDay.eventsTotal >= 0, JSON.stringify(report.growthPerPersonDay));
    assert.ok(report.sweeper.events >= report.uploads && report.sweeper.seconds >= 0, JSON.stringify(report.sweeper));
    assert.deepEqual(capacityProcesses(), []);
  });

  it('stops everything it started when the run fails', async () => {
    await assert.rejects(runCapacity({ ...SMALL, people: 0 }));
    assert.deepEqual(capacityProcesses(), []);
  });
});
