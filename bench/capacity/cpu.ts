/**
 * CPU time from /proc (Linux), for the profile of what limits the run: a process with its live
 * children (a postmaster's backends), the ended children it has reaped, and the machine as a whole.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Linux reports CPU times in clock ticks of USER_HZ: 100 per second on x86 and Arm. */
const MS_PER_TICK = 10;

interface Stat {
  ppid: number;
  /** utime + stime. */
  own: number;
  /** cutime + cstime: children waited for. */
  reaped: number;
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name (which may hold spaces): ppid is the 2nd field, utime..cstime the 12th to 15th.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) };
  } catch {
    return null;
  }
}

/** CPU ms of `pid`, its live children and the children it has reaped; 0 if it is gone. */
export function treeCpuMs(pid: number | null): number {
  if (!pid) return 0;
  const root = stat(pid);
  if (!root) return 0;
  let ticks = root.own + root.reaped;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const child = stat(Number(name));
    if (child && child.ppid === pid) ticks += child.own + child.reaped;
  }
  return ticks * MS_PER_TICK;
}

/** Busy CPU ms of the whole machine so far (every core, every process: the other users' too). */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  void idle;
  void iowait;
  return (user! + nice! + system! + irq! + softirq! + steal!) * MS_PER_TICK;
}
