/**
 * Latency below saturation: what the gateway adds to a non-streamed chat call when it is not
 * overloaded. Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/open-loop.ts [--seconds 10] [--fractions 25,50,75] [--saturation N] [--accounts 1] [--no-pin] [--pin-services] [--floor]
 *
 * 1. Starts the zero-latency fake upstream and the gateway (Postgres+Redis), the gateway pinned to
 *    core 1, this script, h2load and the fake to core 0 (bench/lib/cpu-pin.ts); `--no-pin` leaves
 *    them to the scheduler (on a machine shared with other work a pinned gateway cannot move away
 *    from a busy core).
 * 2. Saturation: h2load closed loop, 64 connections, non-streamed chat through the gateway (unless
 *    `--saturation N` gives it).
 * 3. Open loop (h2load `--rps`) at each fraction of that rate, through the gateway and then direct
 *    to the fake at the same rate (the direct baseline, same run); percentiles from h2load's
 *    per-request log. "Added" = gateway − direct.
 * 4. Time to the first streamed byte at 50 %: while h2load keeps the 50 % load on, a probe sends
 *    a streamed chat call every 20 ms on a pool of keep-alive connections
 *    (bench/lib/first-byte-probe.ts), through the gateway and direct, with the medians of the
 *    gateway's own `Server-Timing` parts (bench/time-split.ts splits every part, at each load);
 *    once against the fake's fast stream (all 20 events in one write, so the gateway's first
 *    read holds the whole answer) and once against its paced one (an event a millisecond, as a
 *    real model's first token arrives alone).
 * 5. Where the machine's CPU went in each gateway row (bench/lib/machine-cpu.ts): the gateway's,
 *    Postgres's (every `postgres` process) and Redis's share of a core, and each core's busy share.
 *    On two cores Postgres shares the gateway's core unless `--pin-services` moves it, and its
 *    work per call is of the gateway's order, so "50 % of saturation" is not a half-idle core.
 * `--floor` also runs each rate through a bare Bun proxy pinned where the gateway is
 * (bench/lib/bare-proxy.ts: `fetch` to the fake and back, nothing else): what relaying the call
 * at all adds on this machine at that rate, the floor under the targets, and its CPU per call.
 * `--accounts N` spreads every load over N accounts (one h2load process per account's key, the
 * rate split evenly; the direct baseline split over as many processes): all calls of one account
 * settle against its one balance row, so one account measures that row's serialisation too.
 * Every process it starts is stopped at the end, also on error or Ctrl-C; traffic goes to 127.0.0.1 only.
 */
import { startBareProxy } from './lib/bare-proxy-process.ts';
import { machine } from './lib/cpu-pin.ts';
import { probeFirstByte } from './lib/first-byte-probe.ts';
import {
  closedLoop,
  median,
  openLoop,
  percentile,
  requireH2load,
  type H2loadTarget,
  type LoadRun,
} from './lib/h2load.ts';
import { checkTarget, HOST, startLlmBenchStack } from './lib/llm-bench-stack.ts';
import { withMachineShares } from './lib/machine-cpu.ts';
import { table } from './lib/wrk.ts';
import { stringArg } from './lib/cli-args.ts';

const SECONDS = Number(stringArg('--seconds', '10')) || 10;
const FRACTIONS = stringArg('--fractions', '25,50,75')
  .split(',')
  .map((f) => Number(f) / 100)
  .filter((f) => f > 0 && f < 1);
const GIVEN_SATURATION = Number(stringArg('--saturation', '0'));
const SATURATION_CONNECTIONS = 64;
const PROBE_INTERVAL_MS = 20; // 50 probes a second: small beside the background load
const ACCOUNTS = Math.max(1, Math.floor(Number(stringArg('--accounts', '1')) || 1));
const FLOOR = process.argv.includes('--floor');

const TARGET_ADDED_P50_MS = 0.1;
const TARGET_ADDED_P99_MS = 1;
const TARGET_ADDED_FIRST_BYTE_MS = 0.3;

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (n: number, d = 3) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const signed = (n: number, d = 3) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(d)}` : 'n/a');
const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');

/** Answers that are not 200, as `status×count`, or `—`. */
function non200(run: LoadRun): string {
  const bad = [...run.statuses].filter(([status]) => status !== 200);
  return bad.length ? bad.map(([s, n]) => `${s}×${n}`).join(' ') : '—';
}

// `--pin-services`: Postgres and Redis on the load core too; on two cores they then share it with
// h2load and the fake upstream, which slowed the settlement more than it freed the gateway (bench/README.md).
const stack = await startLlmBenchStack('openloop', {
  pin: !process.argv.includes('--no-pin'),
  pinServices: process.argv.includes('--pin-services'),
});
// The floor: a bare Bun proxy on the gateway's core, relaying to the same fake upstream.
const bare = FLOOR ? await startBareProxy(stack) : undefined;
try {
  const keys: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) keys.push(await stack.newKey(`bench-openloop-${i}`));
  const key = keys[0] ?? '';
  const gatewayChats = keys.map((k) => stack.chat('gateway', { key: k }));
  const gatewayChat = gatewayChats[0] ?? stack.chat('gateway', { key });
  const directChat = stack.chat('direct');
  const directChats = keys.map(() => directChat);
  const floorChats = bare ? directChats.map((t) => bare.via(t)) : undefined;
  if (floorChats?.[0]) await checkTarget(floorChats[0], false);
  const gatewayStream = stack.chat('gateway', { key, stream: true });
  const directStream = stack.chat('direct', { stream: true });
  const gatewayPaced = stack.chat('gateway', { key, stream: true, paced: true });
  const directPaced = stack.chat('direct', { stream: true, paced: true });
  await checkTarget(gatewayChat, false);
  await checkTarget(directChat, false);
  await checkTarget(gatewayStream, true);
  await checkTarget(directStream, true);
  console.log(
    `Machine: ${machine()}; pinned: ${stack.pinned ? 'gateway core 1, load and fake upstream core 0' : 'no'}\n`,
  );

  // ---- saturation (closed loop)
  let saturation = GIVEN_SATURATION;
  if (!saturation) {
    const perAccount = await Promise.all(
      gatewayChats.map((t) => closedLoop(t, Math.ceil(SATURATION_CONNECTIONS / ACCOUNTS), SECONDS)),
    );
    const sat = perAccount[0] as LoadRun;
    saturation = perAccount.reduce((sum, r) => sum + r.rate, 0);
    log(
      `saturation: ${Math.round(sat.rate)} req/s (p50 ${ms(sat.p50Ms)} p99 ${ms(sat.p99Ms)} ms, non-200 ${non200(sat)})`,
    );
    console.log(
      `Saturation (h2load closed loop, ${SATURATION_CONNECTIONS} connections, ${SECONDS} s after 2 s warm-up, non-streamed chat through the gateway, ${ACCOUNTS} account(s)): ` +
        `${Math.round(saturation)} req/s; first account's p50 ${ms(sat.p50Ms)} ms, p99 ${ms(sat.p99Ms)} ms, non-200: ${non200(sat)}\n`,
    );
  }

  // ---- open loop at each fraction, gateway then direct at the same rate
  const rows: Array<Record<string, string | number>> = [];
  const at50: { gateway?: LoadRun; direct?: LoadRun } = {};
  for (const fraction of FRACTIONS) {
    const rate = Math.max(1, Math.round(saturation * fraction));
    const { result: viaGateway, shares } = await withMachineShares(stack.gateway.proc.pid, () =>
      openLoop(gatewayChats, rate, SECONDS),
    );
    const direct = await openLoop(directChats, rate, SECONDS);
    // The bare proxy's own CPU per call at the same rate: below saturation a call costs more than
    // under load (each wakes an idle core), the floor's too, so the gateway's reads against it.
    const floor =
      bare && floorChats
        ? await withMachineShares(bare.proc.pid, () => openLoop(floorChats, rate, SECONDS))
        : undefined;
    const runs: Record<'gateway' | 'direct', LoadRun> & { floor?: LoadRun } = {
      gateway: viaGateway,
      direct,
      ...(floor ? { floor: floor.result } : {}),
    };
    const g = runs.gateway;
    const d = runs.direct;
    const f = runs.floor;
    const pct = (share: number) => Math.round(share * 100);
    if (fraction === 0.5) Object.assign(at50, runs);
    for (const [path, r] of Object.entries(runs))
      log(
        `${fraction * 100}% ${path}: ${Math.round(r.rate)}/${rate} req/s p50 ${ms(r.p50Ms)} p99 ${ms(r.p99Ms)} ms non-200 ${non200(r)}`,
      );
    rows.push({
      load: `${Math.round(fraction * 100)} %`,
      'rate req/s (target)': rate,
      'achieved gateway / direct': `${Math.round(g.rate)} / ${Math.round(d.rate)}`,
      'direct p50 ms': ms(d.p50Ms),
      'gateway p50 ms': ms(g.p50Ms),
      'added p50 ms': signed(g.p50Ms - d.p50Ms),
      'direct p99 ms': ms(d.p99Ms),
      'gateway p99 ms': ms(g.p99Ms),
      'added p99 ms': signed(g.p99Ms - d.p99Ms),
      ...(f
        ? {
            'bare proxy added p50 / p99 ms': `${signed(f.p50Ms - d.p50Ms)} / ${signed(f.p99Ms - d.p99Ms)}`,
          }
        : {}),
      'non-200 gateway / direct': `${non200(g)} / ${non200(d)}`,
      // Includes the 1 s warm-up, so a little above the measured window's share.
      'gateway CPU, % of a core': pct(shares.gateway),
      'gateway CPU ms per call': ms((shares.gateway * 1000) / g.rate, 2),
      ...(f && floor ? { 'bare proxy CPU ms per call': ms((floor.shares.gateway * 1000) / f.rate, 2) } : {}),
      'Postgres / Redis, % of a core': `${pct(shares.postgres)} / ${pct(shares.redis)}`,
      'busy % per core': shares.cores.map(pct).join(' / '),
    });
  }
  console.log(
    `### Open loop (h2load --h1 --rps, ${SECONDS} s per row after 1 s warm-up), non-streamed chat, gateway (${ACCOUNTS} account(s)) vs direct to the fake\n`,
  );
  console.log(table(rows));
  console.log('');

  // ---- time to first streamed byte at 50 %
  const rate50 = Math.max(1, Math.round(saturation * 0.5));
  const samples = Math.floor((SECONDS * 1000) / PROBE_INTERVAL_MS);
  const firstByte = async (load: H2loadTarget[], probe: H2loadTarget) => {
    const url = new URL(probe.url);
    const background = openLoop(load, rate50, SECONDS + 1, { warmUp: 0 });
    await Bun.sleep(1000); // the load reaches its rate first
    const probed = await probeFirstByte({
      host: HOST,
      port: Number(url.port),
      path: url.pathname,
      headers: probe.headers,
      body: probe.body,
      samples,
      intervalMs: PROBE_INTERVAL_MS,
      deadlineMs: SECONDS * 1000, // stops with the background load
    });
    const loadRun = await background;
    const sorted = (xs: number[]) => Float64Array.from(xs).sort();
    return {
      head: sorted(probed.headMs),
      event: sorted(probed.firstEventMs),
      timing: probed.serverTiming,
      skipped: probed.skipped,
      load: loadRun,
    };
  };
  // The fake's fast stream writes all its events at once, so its first read holds the whole
  // answer; the paced one writes each event on its own, as a real model's first token comes.
  const probes = {
    burst: {
      gateway: await firstByte(gatewayChats, gatewayStream),
      direct: await firstByte(directChats, directStream),
    },
    paced: { gateway: await firstByte(gatewayChats, gatewayPaced), direct: await firstByte(directChats, directPaced) },
  };
  const fbRows = (['burst', 'paced'] as const).flatMap((kind) =>
    (['direct', 'gateway'] as const).map((path) => {
      const r = probes[kind][path];
      return {
        path: `${path}, ${kind === 'burst' ? 'all events in one write' : 'events 1 ms apart'}`,
        samples: r.event.length,
        'skipped (all 8 busy)': r.skipped,
        'first event p50 ms': ms(percentile(r.event, 50)),
        'first event p99 ms': ms(percentile(r.event, 99)),
        'head p50 ms': ms(percentile(r.head, 50)),
        // The gateway's own account of each answer (docs/observability.md); the fake sends none.
        'Server-Timing p50 gateway / upstream ms': r.timing.some((t) => 'gateway' in t)
          ? `${ms(median(r.timing.map((t) => t.gateway ?? 0)))} / ${ms(median(r.timing.map((t) => t.upstream ?? 0)))}`
          : '—',
        'background req/s (non-200)': `${Math.round(r.load.rate)} (${non200(r.load)})`,
      };
    }),
  );
  const added = (kind: 'burst' | 'paced', p: number) =>
    percentile(probes[kind].gateway.event, p) - percentile(probes[kind].direct.event, p);
  const addedFirstP50 = added('burst', 50);
  const addedPacedP50 = added('paced', 50);
  console.log(
    `### Time to the first streamed byte at 50 % (${rate50} req/s of non-streamed chat in the background; one streamed chat every ${PROBE_INTERVAL_MS} ms on a pool of 8 keep-alive connections)\n`,
  );
  console.log(table(fbRows));
  console.log(
    `\nadded first byte: all events in one write p50 ${signed(addedFirstP50)} ms, p99 ${signed(added('burst', 99))} ms; ` +
      `events 1 ms apart p50 ${signed(addedPacedP50)} ms, p99 ${signed(added('paced', 99))} ms\n`,
  );

  const g50 = at50.gateway;
  const d50 = at50.direct;
  if (g50 && d50) {
    const addedP50 = g50.p50Ms - d50.p50Ms;
    const addedP99 = g50.p99Ms - d50.p99Ms;
    console.log(
      `Targets at 50 %: added p50 ≤ ${TARGET_ADDED_P50_MS} ms — ${verdict(addedP50 <= TARGET_ADDED_P50_MS)} (${signed(addedP50)} ms); ` +
        `added p99 ≤ ${TARGET_ADDED_P99_MS} ms — ${verdict(addedP99 <= TARGET_ADDED_P99_MS)} (${signed(addedP99)} ms); ` +
        `added first streamed byte ≤ ${TARGET_ADDED_FIRST_BYTE_MS} ms (p50) — ${verdict(addedFirstP50 <= TARGET_ADDED_FIRST_BYTE_MS)} (${signed(addedFirstP50)} ms; ` +
        `events 1 ms apart ${verdict(addedPacedP50 <= TARGET_ADDED_FIRST_BYTE_MS)}, ${signed(addedPacedP50)} ms).`,
    );
  }
} catch (err) {
  log(`gateway output:\n${stack.gateway.output().slice(-4000)}`);
  throw err;
} finally {
  await bare?.stop();
  await stack.stop();
}
