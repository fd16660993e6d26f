/**
 * What a gateway costs when nobody calls it: CPU per second of the whole process and of its main
 * thread, how often the main thread wakes (its voluntary context switches: each is a sleep in the
 * event loop that ended), and the CPU of the Postgres backends serving its database (the task and
 * webhook queues look for due work by polling). A host running many instances, or one that bills
 * by CPU, pays this all day; and every wake-up of a sleeping process is slow on a shared VM.
 *
 *   bun run bench/idle.ts [--seconds 30] [--settle-seconds 5] [--modes postgres+redis,embedded]
 *     [--against DIR]
 *
 * Each mode starts one gateway (a sandbox model only), lets it finish starting for
 * `--settle-seconds`, then samples `--seconds` of rest. Nothing is pinned: idle figures do not
 * compete for a core. `--against DIR` (a worktree of another commit, node_modules linked) measures
 * DIR's gateway the same way first, mode by mode.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MODES, startGateway, type Mode } from '../tests/helpers/gateway-process.ts';
import { dropTestDatabases } from '../tests/helpers/services.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';
import { backendCpu, backendCpuSince } from './lib/postgres-backend-cpu.ts';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/proc-cpu.ts';
import { writeSandboxConfig } from './lib/sandbox-config.ts';

const SECONDS = numberArg('--seconds', 30);
const SETTLE_SECONDS = numberArg('--settle-seconds', 5);
const MODE_NAMES = stringArg('--modes', 'postgres+redis,embedded').split(',');
const AGAINST = stringArg('--against', '');

/** Voluntary context switches of one thread: how many times it went to sleep and was woken. */
function wakeUps(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
}

interface Rest {
  mode: string;
  checkout: string;
  cpuMsPerS: number;
  mainMsPerS: number;
  wakeUpsPerS: number;
  postgresMsPerS: number | undefined;
}

async function measure(mode: Mode, root: string, checkout: string): Promise<Rest> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-idle-'));
  const config = await writeSandboxConfig(dir);
  const env = await mode.env('bench_idle');
  const gateway = await startGateway({ ...env, GATEWAY_CONFIG: config, LOG_LEVEL: 'warn' }, { root });
  try {
    await Bun.sleep(SETTLE_SECONDS * 1000);
    const pid = gateway.proc.pid;
    const database = env.DATABASE_URL;
    const before = {
      cpu: cpuSeconds(pid),
      main: mainThreadCpuSeconds(pid),
      wakes: wakeUps(pid),
      postgres: database ? await backendCpu(database) : new Map<number, number>(),
      at: performance.now(),
    };
    await Bun.sleep(SECONDS * 1000);
    const seconds = (performance.now() - before.at) / 1000;
    return {
      mode: mode.name,
      checkout,
      cpuMsPerS: ((cpuSeconds(pid) - before.cpu) * 1000) / seconds,
      mainMsPerS: ((mainThreadCpuSeconds(pid) - before.main) * 1000) / seconds,
      wakeUpsPerS: (wakeUps(pid) - before.wakes) / seconds,
      postgresMsPerS: database
        ? (backendCpuSince(before.postgres, await backendCpu(database)) * 1000) / seconds
        : undefined,
    };
  } finally {
    await gateway.stop('SIGKILL');
    if (env.DATABASE_URL) await dropTestDatabases([env.DATABASE_URL]);
    if (env.DATA_DIR) await rm(env.DATA_DIR, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  }
}

const here = resolve(import.meta.dir, '..');
const checkouts = AGAINST ? [{ root: resolve(AGAINST), label: resolve(AGAINST) }] : [];
checkouts.push({ root: here, label: 'this checkout' });
const rests: Rest[] = [];
for (const name of MODE_NAMES) {
  const mode = MODES.find((m) => m.name === name);
  if (!mode) throw new Error(`unknown mode ${name}`);
  for (const { root, label } of checkouts) rests.push(await measure(mode, root, label));
}
console.log(`\nAn idle gateway, ${SECONDS} s after ${SETTLE_SECONDS} s of start-up\n`);
console.log(
  '| mode | checkout | CPU ms per s (process) | main thread ms per s | main thread wake-ups per s | its Postgres backends, CPU ms per s |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const r of rests)
  console.log(
    `| ${r.mode} | ${r.checkout} | ${r.cpuMsPerS.toFixed(2)} | ${r.mainMsPerS.toFixed(2)} | ${r.wakeUpsPerS.toFixed(1)} | ${r.postgresMsPerS === undefined ? '—' : r.postgresMsPerS.toFixed(2)} |`,
  );
