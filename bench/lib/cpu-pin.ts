/**
 * Pins processes to cores with `taskset` (util-linux), so a latency comparison does not measure
 * the gateway and the load generator taking turns on one core: the gateway gets core 1, the
 * benchmark itself, everything it spawns (h2load, the probes) and the fake upstream get core 0.
 * Postgres and Redis are system services and stay where the scheduler puts them.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export const LOAD_CORE = 0;
export const GATEWAY_CORE = 1;

/** Whether the machine has the two cores the split needs and `taskset` is there. */
export function canPin(): boolean {
  return cpus().length >= 2 && Bun.which('taskset') !== null;
}

/**
 * Pins every thread of `pid` (`-a`: Bun's HTTP client, GC and worker threads too) to `core`;
 * threads started later inherit it. Returns false, and pins nothing, when pinning is not possible.
 */
export function pin(pid: number, core: number): boolean {
  if (!canPin()) return false;
  const done = Bun.spawnSync(['taskset', '-a', '-p', '-c', String(core), String(pid)], {
    stdout: 'ignore',
    stderr: 'pipe',
  });
  if (done.exitCode !== 0) throw new Error(`taskset failed for pid ${pid}: ${done.stderr.toString()}`);
  return true;
}

/** A one-line description of the machine, for the figures' heading. */
export function machine(): string {
  const list = cpus();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return `${list.length} × ${list[0]?.model ?? 'unknown CPU'}, load average ${load}, Bun ${Bun.version}`;
}

/**
 * Moves this machine's Postgres and Redis server processes (every thread) to `core`, so the
 * gateway's core is its own: unpinned, a backend woken by the gateway's write tends to run on
 * the waker's core and takes it from the gateway for the statement's length (seen as time in
 * the socket write in a CPU profile). Returns a function that gives them back every core they
 * had. Services on another host are not found and not touched.
 */
export function pinServices(core: number): () => void {
  if (!canPin()) return () => {};
  const pids = ['postgres', 'redis-server'].flatMap((name) =>
    Bun.spawnSync(['pgrep', '-x', name], { stdout: 'pipe', stderr: 'ignore' })
      .stdout.toString()
      .split('\n')
      .filter(Boolean)
      .map(Number),
  );
  const before = new Map<number, string>();
  for (const pid of pids) {
    const shown = Bun.spawnSync(['taskset', '-p', '-c', String(pid)], { stdout: 'pipe', stderr: 'ignore' });
    const list = /:\s*(\S+)\s*$/.exec(shown.stdout.toString())?.[1];
    if (shown.exitCode !== 0 || !list) continue;
    before.set(pid, list);
    Bun.spawnSync(['taskset', '-a', '-p', '-c', String(core), String(pid)], { stdout: 'ignore', stderr: 'ignore' });
  }
  return () => {
    for (const [pid, list] of before)
      Bun.spawnSync(['taskset', '-a', '-p', '-c', list, String(pid)], { stdout: 'ignore', stderr: 'ignore' });
  };
}
