/**
 * CPU time a process has used (user + system, all threads), from /proc/<pid>/stat, so a phase
 * can report how busy the gateway was: a figure that other work on a shared machine disturbs far
 * less than latency does. @see https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of utime/stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** CPU time of `pid`'s main thread alone (the JavaScript event loop): work moved to other threads is not in it. */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(path: string): number {
  return cpuSecondsOfStat(readFileSync(path, 'utf8'));
}

/** User + system CPU seconds from the text of a `/proc/<pid>/stat` already read. */
function cpuSecondsOfStat(stat: string): number {
  // Fields after the command name (which may hold spaces, inside parentheses): utime is the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Runs `work` and returns its result with the share of one core `pid` used meanwhile (1 = a whole core). */
export async function withCpuShare<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; cpuShare: number }> {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const result = await work();
  return { result, cpuShare: (cpuSeconds(pid) - cpu0) / ((performance.now() - t0) / 1000) };
}

/** One process of this machine as `/proc/<pid>/stat` shows it. */
export interface ProcessStat {
  pid: number;
  /** The command name (at most 15 characters). */
  name: string;
  ppid: number;
  cpuSeconds: number;
}

/** Every process alive now, each read once (one that exits meanwhile is left out). */
export function processStats(): ProcessStat[] {
  const out: ProcessStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const close = stat.lastIndexOf(')');
    // After the parenthesised command: the state, then the parent pid.
    const ppid = Number(stat.slice(close + 2).split(' ', 2)[1]);
    out.push({
      pid: Number(entry),
      name: stat.slice(stat.indexOf('(') + 1, close),
      ppid,
      cpuSeconds: cpuSecondsOfStat(stat),
    });
  }
  return out;
}
