/**
 * Bad input under load: does hostile traffic from one account move the latency of another
 * account's well-behaved traffic? Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/hostile-under-load.ts [--seconds 5] [--rounds 8] [--saturation N] [--hostile-rps 50] [--slow 8] [--kinds a,b]
 *                                       [--burn-control] [--no-pin]
 *
 * Starts the fake upstream and the gateway pinned as bench/open-loop.ts does (gateway core 1,
 * the rest core 0), with BODY_TIMEOUT_MS=2000 so slow bodies are answered (408) within a phase.
 * Finds the saturation rate (h2load closed loop, 64 connections, non-streamed chat) unless
 * `--saturation` gives it, then drives well-behaved non-streamed chat open loop at 50 % of it
 * (h2load `--rps`) in `--rounds` pairs of phases: alone, then while bench/lib/hostile-sender.ts
 * sends the hostile mix from a second account. Prints p50/p99 of the well-behaved traffic per
 * phase (with the gateway's CPU, and the sender's own: it shares the load core with h2load, the
 * fake and, unpinned, Postgres, so what it burns there can slow the load rather than the
 * gateway), and judges the target on the median p99 of the hostile phases against the median of
 * the quiet ones: below saturation on one account two quiet phases can differ by half (the queue
 * behind the settlement batch in flight is bistable, bench/README.md), so one pair decides
 * nothing. Many short rounds by default: the slow calls come in episodes of a few hundred ms, so
 * one episode more or less moves a 10 s phase's p99 by up to 4×, and three rounds of those gave
 * opposite verdicts on the same code; the median of eight is steadier. Also prints the hostile
 * answers' status counts per kind (no 5xx expected; 0 = no answer). `--kinds oversize,slow`
 * sends only the kinds whose name contains one of those words (see bench/lib/hostile-sender.ts).
 * `--burn-control` adds a third phase to each round: no hostile request, but bench/lib/cpu-burner.ts
 * burning on the load core what the sender burned in the round's hostile phase, so the p99 moved
 * by the sender's own CPU can be told from the p99 moved by what the gateway does with its requests.
 */
import { resolve } from 'node:path';
import { machine } from './lib/cpu-pin.ts';
import { closedLoop, median, openLoop, requireH2load, type LoadRun } from './lib/h2load.ts';
import { checkTarget, startLlmBenchStack } from './lib/llm-bench-stack.ts';
import { withCpuShare } from './lib/proc-cpu.ts';
import { table } from './lib/wrk.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';

const SECONDS = numberArg('--seconds', 5);
const ROUNDS = numberArg('--rounds', 8);
const GIVEN_SATURATION = numberArg('--saturation', 0);
const HOSTILE_RPS = numberArg('--hostile-rps', 50);
const SLOW_BODIES = numberArg('--slow', 8);
const BODY_TIMEOUT_MS = 2000;
const KINDS = stringArg('--kinds', '');
const SLOW_ON = !KINDS || KINDS.split(',').some((f) => f && 'slow body'.includes(f));
const TARGET_P99_CHANGE = 0.2;
const BURN_CONTROL = process.argv.includes('--burn-control');

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : 'n/a');
const pct = (n: number) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${(n * 100).toFixed(1)} %` : 'n/a');

interface HostileReport {
  sent: number;
  /** The sender's own CPU over its run, in seconds (it shares the load core with h2load, the fake and the services). */
  senderCpuSeconds?: number;
  byKind: Record<string, Record<string, number>>;
  statuses: Record<string, number>;
}

/** Runs the hostile sender for `seconds` (its own process, on the load core like this one); its JSON report. */
async function hostile(port: number, key: string, seconds: number): Promise<HostileReport> {
  const proc = Bun.spawn(
    [
      process.execPath,
      'run',
      resolve(import.meta.dir, 'lib/hostile-sender.ts'),
      String(port),
      key,
      String(seconds),
      String(HOSTILE_RPS),
      String(SLOW_BODIES),
      KINDS,
    ],
    { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } },
  );
  const killer = setTimeout(() => proc.kill('SIGKILL'), (seconds + 90) * 1000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(killer);
  if (code !== 0) throw new Error(`hostile sender failed (${code}): ${err.slice(-2000)}`);
  const report = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as HostileReport;
  const cpu = proc.resourceUsage()?.cpuTime.total;
  return { ...report, senderCpuSeconds: cpu === undefined ? undefined : Number(cpu) / 1e6 };
}

/** Burns `share` of the load core for `seconds` (bench/lib/cpu-burner.ts), sending nothing. */
async function burn(share: number, seconds: number): Promise<void> {
  const proc = Bun.spawn(
    [process.execPath, 'run', resolve(import.meta.dir, 'lib/cpu-burner.ts'), String(share), String(seconds)],
    {
      stdout: 'ignore',
      stderr: 'pipe',
      env: { PATH: process.env.PATH ?? '' },
    },
  );
  const code = await proc.exited;
  if (code !== 0)
    throw new Error(`cpu burner failed (${code}): ${(await new Response(proc.stderr).text()).slice(-2000)}`);
}

type PhaseKind = 'alone' | 'hostile' | 'control';

const non200 = (run: LoadRun) =>
  [...run.statuses]
    .filter(([s]) => s !== 200)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ') || '—';

const stack = await startLlmBenchStack('hostile', {
  env: { BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) },
  pin: !process.argv.includes('--no-pin'),
});
try {
  const goodKey = await stack.newKey('bench-well-behaved');
  const badKey = await stack.newKey('bench-hostile');
  const good = stack.chat('gateway', { key: goodKey });
  await checkTarget(good, false);
  console.log(
    `Machine: ${machine()}; pinned: ${stack.pinned ? 'gateway core 1, load and fake upstream core 0' : 'no'}\n`,
  );

  let saturation = GIVEN_SATURATION;
  if (!saturation) {
    const sat = await closedLoop(good, 64, SECONDS);
    saturation = sat.rate;
    log(`saturation: ${Math.round(sat.rate)} req/s`);
  }
  const rate = Math.max(1, Math.round(saturation * 0.5));
  console.log(
    `Well-behaved load: non-streamed chat through the gateway, open loop at ${rate} req/s (50 % of ${Math.round(saturation)} req/s measured closed loop, 64 connections); ` +
      `hostile: ${HOSTILE_RPS} req/s of the mix${KINDS ? ` (kinds matching ${KINDS})` : ''} plus ${SLOW_ON ? SLOW_BODIES : 0} slow bodies held open, from a second account; ${SECONDS} s per phase after 1 s warm-up.\n`,
  );

  const pid = stack.gateway.proc.pid;
  const phases: Array<{ phase: string; run: LoadRun; cpuShare: number; kind: PhaseKind; senderShare?: number }> = [];
  const reports: HostileReport[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const quiet = await withCpuShare(pid, () => openLoop(good, rate, SECONDS));
    phases.push({ phase: `${round}: alone`, run: quiet.result, cpuShare: quiet.cpuShare, kind: 'alone' });
    log(
      `round ${round} alone: p50 ${ms(quiet.result.p50Ms)} p99 ${ms(quiet.result.p99Ms)} non-200 ${non200(quiet.result)}`,
    );
    // The hostile sender starts with the warm-up second and stops when the measured window ends.
    const loud = await withCpuShare(pid, () =>
      Promise.all([openLoop(good, rate, SECONDS), hostile(stack.gateway.port, badKey, SECONDS + 1)]),
    );
    const [run, report] = loud.result;
    reports.push(report);
    // The sender runs for the warm-up second and the phase.
    const senderShare = report.senderCpuSeconds === undefined ? undefined : report.senderCpuSeconds / (SECONDS + 1);
    phases.push({
      phase: `${round}: with hostile traffic`,
      run,
      cpuShare: loud.cpuShare,
      kind: 'hostile',
      senderShare,
    });
    log(`round ${round} with hostile: p50 ${ms(run.p50Ms)} p99 ${ms(run.p99Ms)} non-200 ${non200(run)}`);
    if (BURN_CONTROL && senderShare !== undefined) {
      const burned = await withCpuShare(pid, () =>
        Promise.all([openLoop(good, rate, SECONDS), burn(senderShare, SECONDS + 1)]),
      );
      const [controlRun] = burned.result;
      phases.push({
        phase: `${round}: load core burned as by the sender`,
        run: controlRun,
        cpuShare: burned.cpuShare,
        kind: 'control',
        senderShare,
      });
      log(`round ${round} control: p50 ${ms(controlRun.p50Ms)} p99 ${ms(controlRun.p99Ms)}`);
    }
  }
  const p99Of = (kind: PhaseKind) => median(phases.filter((p) => p.kind === kind).map((p) => p.run.p99Ms));
  const p50Of = (kind: PhaseKind) => median(phases.filter((p) => p.kind === kind).map((p) => p.run.p50Ms));
  const quietP99 = p99Of('alone');
  const quietP50 = p50Of('alone');
  console.log('### Well-behaved traffic\n');
  console.log(
    table(
      phases.map(({ phase, run, cpuShare, senderShare }) => ({
        phase,
        'achieved req/s': Math.round(run.rate),
        'p50 ms': ms(run.p50Ms),
        'p99 ms': ms(run.p99Ms),
        'p99 vs quiet median': pct(run.p99Ms / quietP99 - 1),
        'non-200': non200(run),
        'gateway CPU, % of a core': Math.round(cpuShare * 100),
        'sender (or burner) CPU, % of a core': senderShare === undefined ? '—' : Math.round(senderShare * 100),
      })),
    ),
  );
  const quietP99s = phases.filter((p) => p.kind === 'alone').map((p) => p.run.p99Ms);
  console.log(
    `\nMedians over ${ROUNDS} round(s): alone p50 ${ms(quietP50)} / p99 ${ms(quietP99)} ms; with hostile traffic p50 ${ms(p50Of('hostile'))} / p99 ${ms(p99Of('hostile'))} ms` +
      (BURN_CONTROL
        ? `; load core burned as by the sender p50 ${ms(p50Of('control'))} / p99 ${ms(p99Of('control'))} ms (${pct(p99Of('control') / quietP99 - 1)} p99)`
        : '') +
      `. Quiet phases alone spanned p99 ${ms(Math.min(...quietP99s))}–${ms(Math.max(...quietP99s))} ms.`,
  );
  const report: HostileReport = { sent: 0, byKind: {}, statuses: {} };
  for (const r of reports) {
    report.sent += r.sent;
    for (const [status, n] of Object.entries(r.statuses)) report.statuses[status] = (report.statuses[status] ?? 0) + n;
    for (const [kind, counts] of Object.entries(r.byKind)) {
      const into = report.byKind[kind] ?? {};
      for (const [status, n] of Object.entries(counts)) into[status] = (into[status] ?? 0) + n;
      report.byKind[kind] = into;
    }
  }

  const kindRows = Object.entries(report.byKind).map(([kind, counts]) => ({
    kind,
    answers: Object.entries(counts)
      .map(([s, n]) => `${s}×${n}`)
      .join(' '),
  }));
  console.log(`\n### Hostile traffic: ${report.sent} requests answered or given up\n`);
  console.log(table(kindRows));
  const fiveXx = Object.entries(report.statuses)
    .filter(([s]) => Number(s) >= 500 || Number(s) === 0)
    .reduce((sum, [, n]) => sum + n, 0);
  const change = p99Of('hostile') / quietP99 - 1;
  console.log(
    `\nTargets: well-behaved median p99 moves ≤ ${TARGET_P99_CHANGE * 100} % — ${change <= TARGET_P99_CHANGE ? 'met' : '**not met**'} (${pct(change)}); ` +
      `no 5xx or unanswered hostile request — ${fiveXx === 0 ? 'met' : `**not met** (${fiveXx})`}.`,
  );
} catch (err) {
  log(`gateway output:\n${stack.gateway.output().slice(-4000)}`);
  throw err;
} finally {
  await stack.stop();
}
