/**
 * Where a phase's CPU went on the whole machine, not just in the gateway: how busy each core was
 * (/proc/stat) and what the local database servers used (every process named `postgres` — its
 * backends, WAL writer and checkpointer — and `redis-server`). On a two-core box the gateway
 * shares its cores with Postgres, whose work per call (the settlement) is of the same order as
 * the gateway's own, so an open-loop row is only readable beside these figures.
 * @see https://man7.org/linux/man-pages/man5/proc.5.html
 */
import { readFileSync } from 'node:fs';
import { cpuSeconds, processStats } from './proc-cpu.ts';

interface Snapshot {
  at: number;
  /** Per core: [busy, total] jiffies. */
  cores: Array<[number, number]>;
  gateway: number;
  postgres: number;
  redis: number;
}

export interface MachineShares {
  /** Share of one core each used over the phase (1 = a whole core). */
  gateway: number;
  postgres: number;
  redis: number;
  /** Each core's busy share (0–1), in core order. */
  cores: number[];
}

function coreJiffies(): Array<[number, number]> {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((line) => /^cpu\d+ /.test(line))
    .map((line) => {
      const v = line.trim().split(/\s+/).slice(1).map(Number);
      const total = v.reduce((a, b) => a + b, 0);
      // idle + iowait are not busy
      return [total - (v[3] ?? 0) - (v[4] ?? 0), total];
    });
}

/** CPU seconds of every process whose command name starts with `prefix` (those alive now). */
function namedCpuSeconds(prefix: string): number {
  let total = 0;
  for (const p of processStats()) if (p.name.startsWith(prefix)) total += p.cpuSeconds;
  return total;
}

/** The gateway's processes: its one pid, or a function listing them (a primary and its workers). */
export type GatewayPids = number | (() => number[]);

function gatewayCpuSeconds(gateway: GatewayPids): number {
  if (typeof gateway === 'number') return cpuSeconds(gateway);
  let total = 0;
  for (const pid of gateway()) {
    try {
      total += cpuSeconds(pid);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

function snapshot(gateway: GatewayPids): Snapshot {
  return {
    at: performance.now(),
    cores: coreJiffies(),
    gateway: gatewayCpuSeconds(gateway),
    postgres: namedCpuSeconds('postgres'),
    redis: namedCpuSeconds('redis-server'),
  };
}

/**
 * Runs `work` and returns its result with the machine's shares meanwhile. A process that started
 * or exited during the phase is counted from zero or missed: a close figure, not an exact one.
 */
export async function withMachineShares<T>(
  gateway: GatewayPids,
  work: () => Promise<T>,
): Promise<{ result: T; shares: MachineShares }> {
  const before = snapshot(gateway);
  const result = await work();
  const after = snapshot(gateway);
  const seconds = (after.at - before.at) / 1000;
  const share = (key: 'gateway' | 'postgres' | 'redis') => (after[key] - before[key]) / seconds;
  return {
    result,
    shares: {
      gateway: share('gateway'),
      postgres: share('postgres'),
      redis: share('redis'),
      cores: after.cores.map(([busy, total], i) => {
        const [busy0, total0] = before.cores[i] ?? [0, 0];
        return total > total0 ? (busy - busy0) / (total - total0) : 0;
      }),
    },
  };
}
