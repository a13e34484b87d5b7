/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): self time by function and by package or
 * source file, the evidence for where a server spends its time under a load.
 *
 *   node dist/bench/profile-summary.js FILE.cpuprofile [TOP]   (after npm run build)
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** Where a frame comes from: an npm package, a Stride source file, or Node/V8 itself. */
function origin(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1).replace(/\.js$/, '.ts') : url;
}

function label(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  return `${name}  ${origin(frame)}:${frame.lineNumber + 1}`;
}

export function summarise(profile: CpuProfile): { totalMs: number; byFunction: SelfTime[]; byOrigin: SelfTime[] } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfById = new Map<number, number>();
  profile.samples.forEach((id, i) => selfById.set(id, (selfById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of selfById) {
    const frame = nodes.get(id)!.callFrame;
    total += micros;
    byFunction.set(label(frame), (byFunction.get(label(frame)) ?? 0) + micros);
    byOrigin.set(origin(frame), (byOrigin.get(origin(frame)) ?? 0) + micros);
  }
  const rank = (map: Map<string, number>) =>
    [...map].map(([name, micros]) => ({ name, ms: micros / 1000, share: micros / total })).sort((a, b) => b.ms - a.ms);
  return { totalMs: total / 1000, byFunction: rank(byFunction), byOrigin: rank(byOrigin) };
}

export function formatSummary(summary: ReturnType<typeof summarise>, top = 25): string {
  const line = (entry: SelfTime) => `${(entry.share * 100).toFixed(1).padStart(5)} %  ${entry.ms.toFixed(0).padStart(7)} ms  ${entry.name}`;
  return [
    `total sampled: ${summary.totalMs.toFixed(0)} ms`,
    '',
    'self time by function:',
    ...summary.byFunction.slice(0, top).map(line),
    '',
    'self time by package / source file:',
    ...summary.byOrigin.slice(0, Math.min(top, 20)).map(line),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: profile-summary FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(`${formatSummary(summarise(profile), Number(process.argv[3] ?? 25))}\n`);
}
