/** The run's table, its PASS/FAIL lines, and the JSON written under bench/results/. */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Measurement } from './loads.js';

export interface Check {
  target: string;
  pass: boolean;
  actual: string;
}

export interface Row {
  load: string;
  server: string;
  unit: string;
  measurement: Measurement;
  /** Ratios to the row's references, e.g. { 'bare node:http': 0.61 }. */
  ratios: Record<string, number>;
  checks: Check[];
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '—');

/**
 * A ratio to two decimals, cut rather than rounded, so that one just below a target never reads
 * as the target (0.698 → "0.69", not "0.70" next to FAIL).
 */
export const ratioText = (ratio: number) => (Number.isFinite(ratio) ? (Math.floor(ratio * 100 + 1e-9) / 100).toFixed(2) : '—');

function pad(cells: string[], widths: number[], right: boolean[]): string {
  return cells.map((cell, i) => (right[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ');
}

/** Aligned columns under a header and a rule. */
function formatColumns(header: string[], right: boolean[], body: string[][]): string {
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...body.map((cells) => cells[i]!.length)));
  const lines = [pad(header, widths, right), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map((cells) => pad(cells, widths, right))];
  return lines.join('\n');
}

export function formatTable(rows: Row[]): string {
  const header = ['load', 'server', 'rate', 'p50 ms', 'p99 ms', 'ratio to reference', 'RSS MB', 'result'];
  const right = [false, false, true, true, true, false, true, false];
  const body = rows.map((row) => {
    const m = row.measurement;
    const ratios = Object.entries(row.ratios).map(([name, ratio]) => `${ratioText(ratio)}× ${name}`).join(', ');
    const result = row.checks.length === 0 ? '' : row.checks.every((check) => check.pass) ? 'PASS' : 'FAIL';
    return [row.load, row.server, `${fixed(m.rate, m.rate < 100 ? 1 : 0)} ${row.unit}`, fixed(m.p50, 2), fixed(m.p99, 2), ratios, m.rssMb === null ? '—' : fixed(m.rssMb, 0), result];
  });
  return formatColumns(header, right, body);
}

/** A CPU time in µs, or in ms from 1 ms up. */
function cpuTime(us: number | null): string {
  if (us === null) return '—';
  return us >= 1000 ? `${fixed(us / 1000, 2)} ms` : `${fixed(us, 0)} µs`;
}

/**
 * CPU time per request, flow or hash during the measured slices: the server's event loop, its
 * other threads (libuv's pool — Argon2id —, V8's garbage collector and compiler), and this process
 * (the load driver; for the hashing bound, the hashing). Every one of them runs on the same cores,
 * so this is where a rate's limit comes from.
 */
export function formatCpuTable(rows: Row[]): string {
  const header = ['load', 'server', 'event loop', 'other threads', 'load driver'];
  const right = [false, false, true, true, true];
  const body = rows.map((row) => {
    const { cpu } = row.measurement;
    return [row.load, row.server, cpuTime(cpu.serverLoopUs), cpuTime(cpu.serverThreadsUs), cpuTime(cpu.driverUs)];
  });
  return formatColumns(header, right, body);
}

export function formatChecks(rows: Row[]): string {
  const lines: string[] = [];
  for (const row of rows) {
    for (const check of row.checks) {
      lines.push(`${check.pass ? 'PASS' : 'FAIL'}  ${row.load} · ${row.server}: ${check.target} — ${check.actual}`);
    }
    if (row.measurement.note) lines.push(`note  ${row.load} · ${row.server}: ${row.measurement.note}`);
  }
  return lines.join('\n');
}

/** bench/results/ of the source tree (the compiled file is <root>/<outDir>/bench/lib/report.js). */
export const RESULTS_DIR = fileURLToPath(new URL('../../../bench/results/', import.meta.url));

export async function writeResults(report: Record<string, unknown>): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = `${RESULTS_DIR}${stamp}.json`;
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

export function machine() {
  const cpuList = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpuList.length,
    cpu_model: cpuList[0]?.model ?? 'unknown',
    memory_gb: Math.round(totalmem() / 2 ** 30),
  };
}

export function ratioCheck(target: string, ratio: number, minimum: number): Check {
  return { target: `${target} ≥ ${minimum}×`, pass: ratio >= minimum, actual: `${ratioText(ratio)}×` };
}

export function p99Check(m: Measurement, maxMs = 20): Check {
  return { target: `p99 ≤ ${maxMs} ms`, pass: m.p99 <= maxMs, actual: `${fixed(m.p99, 2)} ms` };
}

export function rssCheck(m: Measurement, maxMb = 250): Check {
  return { target: `RSS ≤ ${maxMb} MB`, pass: m.rssMb !== null && m.rssMb <= maxMb, actual: `${fixed(m.rssMb ?? NaN, 0)} MB` };
}

export function noErrorsCheck(m: Measurement): Check {
  return { target: 'every answer a success', pass: m.failed === 0 && m.ok > 0, actual: `${m.ok} ok, ${m.failed} failed` };
}
