/**
 * Where the time a gateway adds to a call goes, read from each answer's own `Server-Timing`
 * (docs/observability.md): `gateway` (its own work), `upstream` (waiting on the fake upstream,
 * the fetch's hops included), `settle` (waiting for the charge's commit; JSON answers), and what
 * the client saw outside all three (reading the request, writing the answer, the client's own
 * wake-ups). Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/time-split.ts [--seconds 8] [--fractions 0,25,50] [--saturation N] [--tail 5] [--journal] [--free-services] [--embedded]
 *
 * 1. The pinned stack of bench/lib/llm-bench-stack.ts (gateway alone on core 1; the fake upstream,
 *    Postgres, Redis, h2load and this script on core 0), Postgres+Redis; `--journal` starts the
 *    gateway with `SETTLEMENT_JOURNAL=true`; `--free-services` leaves Postgres and Redis on every core
 *    (they then also run on the gateway's core, in its idle time); `--embedded` runs the embedded
 *    default instead (PGlite in the gateway's process, its settlement journal on by default).
 * 2. Closed loop (64 connections, 10 s) to warm the JIT; its rate is the saturation unless
 *    `--saturation N` gives it.
 * 3. At each fraction of saturation (0: no background load), h2load's open loop of non-streamed
 *    chat runs in the background while two probes (bench/lib/first-byte-probe.ts) each send one
 *    call every 40 ms on keep-alive raw sockets — a JSON call timed to its answer's head, a
 *    streamed call to its first event — first through the gateway, then direct to the fake at
 *    the same background rate (the baseline).
 * 4. A second table takes the slowest `--tail` % of the gateway's answers in each row and averages
 *    their parts: whether a slow answer waited on the upstream, the settlement or its own process.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machine } from './lib/cpu-pin.ts';
import { type FirstByteSamples, probeFirstByte } from './lib/first-byte-probe.ts';
import { closedLoop, median, openLoop, requireH2load, type H2loadTarget } from './lib/h2load.ts';
import { HOST, startLlmBenchStack } from './lib/llm-bench-stack.ts';
import { stringArg } from './lib/cli-args.ts';
import { table } from './lib/wrk.ts';

const SECONDS = Number(stringArg('--seconds', '8')) || 8;
const FRACTIONS = stringArg('--fractions', '0,25,50')
  .split(',')
  .map((f) => Number(f) / 100)
  .filter((f) => f >= 0 && f < 1);
const GIVEN_SATURATION = Number(stringArg('--saturation', '0'));
const JOURNAL = process.argv.includes('--journal');
const EMBEDDED = process.argv.includes('--embedded');
const PROBE_INTERVAL_MS = 40;
/** The slowest this many percent of answers make the tail table. */
const TAIL = Number(stringArg('--tail', '5')) || 5;

/** The slowest `percent` % of `samples` by the client's time: its mean, and each part's mean over the same answers. */
function tailOf(samples: FirstByteSamples, percent: number): Record<string, string | number> {
  const order = samples.firstEventMs.map((ms, i) => [ms, i] as const).sort((a, b) => b[0] - a[0]);
  const slowest = order.slice(0, Math.max(1, Math.round((order.length * percent) / 100)));
  const mean = (f: (i: number) => number) => slowest.reduce((sum, [, i]) => sum + f(i), 0) / slowest.length;
  const part = (name: string) => (i: number) => samples.serverTiming[i]?.[name] ?? 0;
  const client = (i: number) => samples.firstEventMs[i] ?? 0;
  return {
    answers: slowest.length,
    'from ms': ms(slowest.at(-1)?.[0]),
    'mean ms': ms(mean(client)),
    'gateway part': ms(mean(part('gateway'))),
    'upstream part': ms(mean(part('upstream'))),
    'settle part': ms(mean(part('settle'))),
    outside: ms(mean((i) => client(i) - part('gateway')(i) - part('upstream')(i) - part('settle')(i))),
  };
}

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(3) : '—');

const stack = await startLlmBenchStack('split', {
  mode: EMBEDDED ? 'embedded' : 'postgres+redis',
  pin: true,
  pinServices: !process.argv.includes('--free-services'),
  // The journal's files in a directory of their own (the stack's Postgres mode has no DATA_DIR).
  env: JOURNAL ? { SETTLEMENT_JOURNAL: 'true', DATA_DIR: await mkdtemp(join(tmpdir(), 'bench-split-')) } : {},
});
try {
  const key = await stack.newKey('bench-split');
  const targets = {
    gateway: { json: stack.chat('gateway', { key }), stream: stack.chat('gateway', { key, stream: true }) },
    direct: { json: stack.chat('direct'), stream: stack.chat('direct', { stream: true }) },
  };
  console.log(
    `Machine: ${machine()}; pinned: ${stack.pinned}; ${EMBEDDED ? 'embedded default' : 'Postgres+Redis'}; settlement journal: ${JOURNAL || EMBEDDED ? 'on' : 'off'}\n`,
  );
  const warm = await closedLoop(targets.gateway.json, 64, 10, 0);
  const saturation = GIVEN_SATURATION || warm.rate;
  log(`warm-up: ${Math.round(warm.rate)} req/s; saturation taken as ${Math.round(saturation)}`);

  /** The two probes' samples while `background` (if any) keeps its rate. */
  const probe = async (path: 'gateway' | 'direct', rate: number) => {
    const samples = Math.floor((SECONDS * 1000) / PROBE_INTERVAL_MS);
    const background = rate > 0 ? openLoop(targets[path].json, rate, SECONDS + 1, { warmUp: 0 }) : undefined;
    if (background) await Bun.sleep(1000); // the load reaches its rate first
    const run = (t: H2loadTarget) => {
      const url = new URL(t.url);
      return probeFirstByte({
        host: HOST,
        port: Number(url.port),
        path: url.pathname,
        headers: t.headers,
        body: t.body,
        samples,
        intervalMs: PROBE_INTERVAL_MS,
        deadlineMs: SECONDS * 1000,
      });
    };
    const [json, stream] = await Promise.all([run(targets[path].json), run(targets[path].stream)]);
    await background;
    return { json, stream };
  };

  const rows: Array<Record<string, string | number>> = [];
  const tailRows: Array<Record<string, string | number>> = [];
  for (const fraction of FRACTIONS) {
    const rate = Math.round(saturation * fraction);
    const viaGateway = await probe('gateway', rate);
    const direct = await probe('direct', rate);
    for (const kind of ['json', 'stream'] as const) {
      const g = viaGateway[kind];
      const client = g.firstEventMs;
      const part = (name: string) => median(g.serverTiming.map((t) => t[name] ?? 0));
      // Per answer: what the client waited beyond the three parts the gateway accounts for.
      const outside = client.map((c, i) => {
        const t = g.serverTiming[i] ?? {};
        return c - (t.gateway ?? 0) - (t.upstream ?? 0) - (t.settle ?? 0);
      });
      const directP50 = median(direct[kind].firstEventMs);
      const gatewayP50 = median(client);
      rows.push({
        load: fraction ? `${Math.round(fraction * 100)} % (${rate} req/s)` : 'lone calls',
        call: kind === 'json' ? 'JSON, to its head' : 'stream, to its first event',
        samples: client.length,
        'direct p50 ms': ms(directP50),
        'gateway p50 ms': ms(gatewayP50),
        'added p50 ms': ms(gatewayP50 - directP50),
        'gateway part p50': ms(part('gateway')),
        'upstream part p50': ms(part('upstream')),
        'settle part p50': kind === 'json' ? ms(part('settle')) : '—',
        'outside the parts p50': ms(median(outside)),
      });
      tailRows.push({ load: rows.at(-1)?.load ?? '', call: rows.at(-1)?.call ?? '', ...tailOf(g, TAIL) });
      log(`${rows.at(-1)?.load} ${kind}: gateway ${ms(gatewayP50)} ms, direct ${ms(directP50)} ms`);
    }
  }
  console.log(
    `Probes: one JSON and one streamed chat call every ${PROBE_INTERVAL_MS} ms each, ${SECONDS} s per row, ` +
      `over a background open loop of non-streamed chat (h2load --rps) at the stated rate; saturation ${Math.round(saturation)} req/s.\n`,
  );
  console.log(table(rows));
  console.log(
    `\nThe tail: the slowest ${TAIL} % of the gateway's answers in each row, each part's mean over them ` +
      '(what those answers spent their time on; the parts and outside add up to their mean).\n',
  );
  console.log(table(tailRows));
} finally {
  await stack.stop();
}
