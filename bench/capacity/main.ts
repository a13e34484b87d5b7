/**
 * `npm run bench:capacity`: the capacity run with its settings from the environment, its report
 * printed as text and written as JSON (docs/performance.md, "The capacity run").
 *
 *   CAPACITY_PEOPLE     simulated people, each with an account, a device and an app's token (40)
 *   CAPACITY_RATE       the target, uploads a second (450: 100,000 people syncing every 15 minutes)
 *   CAPACITY_DURATION   seconds at the target once the steps below it were sustained (600)
 *   CAPACITY_STEPS      the rates to step up through before the target, comma-separated
 *                       (50,100,200,300); empty for the target alone
 *   CAPACITY_STEP_SECONDS  seconds of each of those steps (60)
 *   CAPACITY_FEED_RATE  the app's feed reads a second (2)
 *   CAPACITY_REPORT     where the JSON report goes (bench/results/capacity-<time>.json)
 *   CAPACITY_CPU_PROF   a folder: the Stride processes run under --cpu-prof, their profiles written there
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installCleanup } from '../lib/processes.js';
import { runCapacity, type CapacityReport } from './capacity.js';

function number(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

export function renderReport(report: CapacityReport): string {
  const lines = [`capacity run: ${report.people} people, ${report.personDays} person-days simulated`];
  for (const step of report.steps) {
    lines.push(`  ${String(step.targetUploadsPerSecond).padStart(5)} uploads/s target, ${step.seconds} s: ${step.uploads.perSecond} uploads/s p50 ${step.uploads.p50Ms} ms p99 ${step.uploads.p99Ms} ms; ${step.reads.perSecond} reads/s p50 ${step.reads.p50Ms} ms p99 ${step.reads.p99Ms} ms; ${step.syncsSkipped} syncs skipped, ${step.errors} errors — ${step.held ? 'held' : step.sustained ? 'sustained, latency over the limits' : 'NOT sustained'}`);
    for (const sample of step.errorSamples) lines.push(`      ${sample}`);
  }
  lines.push(`highest rate sustained: ${report.highestSustained} uploads/s; held within p99 limits: ${report.highestHeld} uploads/s`);
  lines.push(`uploads ${report.uploads}, reads ${report.reads}, errors ${report.errors}`);
  lines.push(`WAL: ${report.walBytes} bytes, ${report.walBytesPerUpload} bytes per upload; replica ${report.replicaLagBytes} bytes behind at the end`);
  lines.push(`primary CPU per upload: ${report.primaryCpuMsPerUpload} ms`);
  lines.push(`CPU (cores busy on average): ${Object.entries(report.profile.cores).map(([part, cores]) => `${part} ${cores}`).join(', ')}`);
  const growth = report.growthPerPersonDay;
  lines.push(`growth per person-day: data ${growth.dataTotal} B (${Object.entries(growth.data).map(([table, bytes]) => `${table} ${bytes}`).join(', ')}), events ${growth.eventsTotal} B (${Object.entries(growth.events).map(([table, bytes]) => `${table} ${bytes}`).join(', ')})`);
  lines.push(`sweeper: ${report.sweeper.events} events gone with their day's partition in ${report.sweeper.seconds} s, ${report.sweeper.walBytes} WAL bytes, ${report.sweeper.primaryCpuMs} ms of the primary's CPU`);
  lines.push('the primary\'s statements by time (calls and ms per upload; of which planning):');
  for (const cost of report.primaryStatements) lines.push(`  ${String(cost.callsPerUpload).padStart(6)} × ${String(cost.msPerUpload).padStart(6)} ms (plan ${cost.planMsPerUpload}) ${cost.query}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  installCleanup();
  const rate = number('CAPACITY_RATE', 450);
  const steps = (process.env.CAPACITY_STEPS ?? '50,100,200,300').split(',').filter((part) => part.trim() !== '').map(Number).filter((step) => step < rate);
  const report = await runCapacity({
    people: number('CAPACITY_PEOPLE', 40),
    rates: [...steps, rate],
    stepSeconds: number('CAPACITY_STEP_SECONDS', 60),
    targetSeconds: number('CAPACITY_DURATION', 600),
    feedPerSecond: number('CAPACITY_FEED_RATE', 2),
    strideFlags: process.env.CAPACITY_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CAPACITY_CPU_PROF}`] : [],
    limits: { uploadP99Ms: 100, readP99Ms: 50 },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const file = process.env.CAPACITY_REPORT ?? join(dirname(fileURLToPath(import.meta.url)), '../../../bench/results', `capacity-${new Date().toISOString().replaceAll(':', '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${renderReport(report)}\nreport: ${file}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
