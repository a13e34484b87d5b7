/**
 * The child processes of a run: each server is its own process on 127.0.0.1. Every child started
 * here is stopped at the end, on failure, and on Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  origin: string;
  port: number;
  /** The last lines the process wrote, for error messages. */
  output(): string;
}

const running = new Set<ChildProcess>();

/** A port the kernel just handed out on loopback (closed again before the child binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface StartOptions {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  /** Resolves when the server answers; polled until the deadline. */
  ready: (origin: string) => Promise<boolean>;
  timeoutMs?: number;
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const child = spawn(process.execPath, options.args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited: string | null = null;
  child.once('exit', (code, signal) => {
    running.delete(child);
    exited = `exited with ${signal ?? code}`;
  });
  const origin = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (exited) throw new Error(`${options.name} ${exited} before it was ready:\n${tail}`);
    if (Date.now() > deadline) {
      await stopServer(child);
      throw new Error(`${options.name} was not ready after ${options.timeoutMs ?? 30_000} ms:\n${tail}`);
    }
    if (await options.ready(origin).catch(() => false)) break;
    await sleep(100);
  }
  return { name: options.name, child, pid: child.pid!, origin, port: options.port, output: () => tail };
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
export async function stopServer(target: ChildProcess | ServerProcess, graceMs = 5000): Promise<void> {
  const child = 'child' in target ? target.child : target;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => stopServer(child)));
}

let installed = false;

/** Stops every child on exit, uncaught errors, Ctrl-C and SIGTERM. */
export function installCleanup(onInterrupt?: () => Promise<void>): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
  const interrupt = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nbench: ${signal}, stopping the servers…\n`);
    const forced = setTimeout(() => process.exit(130), 8000);
    forced.unref();
    void (async () => {
      await stopAll();
      await onInterrupt?.().catch(() => undefined);
      process.exit(130);
    })();
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
}

/** Resident memory of a process in MB, from /proc (Linux). */
function readStatus(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return { rss: rss ? Number(rss[1]) / 1024 : 0, hwm: hwm ? Number(hwm[1]) / 1024 : 0 };
  } catch {
    return null;
  }
}

/** The process's resident memory now, in MB, or null if it is gone. */
export function residentMb(pid: number): number | null {
  return readStatus(pid)?.rss ?? null;
}

/** Samples VmRSS every 100 ms; `stop()` returns the peak seen (MB) and the process's VmHWM. */
export function sampleRss(pid: number): { stop(): { peakMb: number; hwmMb: number } } {
  let peak = readStatus(pid)?.rss ?? 0;
  const timer = setInterval(() => {
    const status = readStatus(pid);
    if (status && status.rss > peak) peak = status.rss;
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      const status = readStatus(pid);
      if (status && status.rss > peak) peak = status.rss;
      return { peakMb: peak, hwmMb: status?.hwm ?? peak };
    },
  };
}

/** Linux reports CPU times in /proc in clock ticks of USER_HZ: 100 per second on x86 and Arm. */
const TICKS_PER_SECOND = 100;

function cpuTicks(statPath: string): number | null {
  try {
    const stat = readFileSync(statPath, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export interface CpuTime {
  /** The process's first thread: Node's event loop. */
  mainMs: number;
  /** Every other thread, ended ones included: libuv's pool (Argon2id), V8's helpers (GC, compiler). */
  otherMs: number;
}

/** CPU time a process has used so far (user + system), its event loop apart; null if it is gone. */
export function processCpu(pid: number): CpuTime | null {
  const total = cpuTicks(`/proc/${pid}/stat`);
  const main = cpuTicks(`/proc/${pid}/task/${pid}/stat`);
  if (total === null || main === null) return null;
  const ms = 1000 / TICKS_PER_SECOND;
  return { mainMs: main * ms, otherMs: (total - main) * ms };
}
