/**
 * LLM relay benchmark: what the gateway adds on top of a zero-latency OpenAI-compatible upstream.
 * Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/llm.ts [--seconds 5] [--streams 1000] [--ttfb 200] [--max-http-requests N] [--only ttfb,wrk,streams]
 *
 * `--max-http-requests N` (default 4096, as `npm start` sets) starts the gateway with BUN_CONFIG_MAX_HTTP_REQUESTS=N (Bun's fetch
 * keeps at most 256 upstream requests in flight per process by default; the rest queue).
 *
 * Starts, as separate processes, the fake upstream (bench/lib/fake-openai-upstream.ts) and the
 * gateway (Postgres+Redis mode, a GATEWAY_CONFIG with one `openai` provider pointing at the fake),
 * then measures with wrk at 1, 16 and 64 connections:
 *   (a) non-streamed chat completions, direct to the fake vs through the gateway;
 *   (b) streamed chat completions, direct vs through the gateway (same-format passthrough);
 *   (c) POST /v1/messages (Anthropic format, both modes) through the gateway, translated to the
 *       OpenAI-style upstream, vs the direct chat call;
 * with time-to-first-byte (sequential fetches, on the still quiet gateway) measured first, and N
 * concurrent slow (~10 s) streams last, through a second gateway idle until then, RSS sampled
 * every 100 ms. Every process it starts is stopped on exit, also on error or Ctrl-C.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../tests/helpers/gateway-process.ts';
import { benchGatewayEnv } from './lib/llm-bench-stack.ts';
import { dropTestDatabases } from '../tests/helpers/services.ts';
import { stopProcesses } from './lib/stop-processes.ts';
import { spawnPortPrinter } from './lib/spawn-port-printer.ts';
import { openSockets, rawStream, type StreamResult } from './lib/raw-stream.ts';
import { peakRssMb, requireWrk, runWrk, table, type LoadResult } from './lib/wrk.ts';
import { numberArg } from './lib/cli-args.ts';

const SECONDS = numberArg('--seconds', 10);
const STREAMS = numberArg('--streams', 1000);
const TTFB_SAMPLES = numberArg('--ttfb', 200);
const MAX_HTTP_REQUESTS = numberArg('--max-http-requests', 4096);
const onlyAt = process.argv.indexOf('--only');
/** `--only ttfb,wrk,streams` runs a subset (all by default). */
const SECTIONS = new Set(onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : ['ttfb', 'wrk', 'streams']);
const CONNECTIONS = [1, 16, 64];
const HOST = '127.0.0.1';

const TARGET_ADDED_P99_MS = 1;
const TARGET_ADDED_TTFB_MS = 0.5;
const TARGET_STREAMS_RSS_MB = 250;

requireWrk();
const log = (line: string) => process.stderr.write(`${line}\n`);
const round = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

// ---------------------------------------------------------------- process bookkeeping and cleanup

const workDir = await mkdtemp(join(tmpdir(), 'bench-llm-'));
let upstream: Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
let gateway: GatewayProcess | undefined;
/** A second gateway, started up front (sources may change while this runs) and left idle until the streams test. */
let streamsGateway: GatewayProcess | undefined;
let databaseUrl: string | undefined;
let gatewayEnv: Record<string, string> = {};
let cleaned = false;

async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  for (const s of openSockets) s.end();
  // never hang on exit: anything still running after 5 s is killed
  await stopProcesses([gateway, streamsGateway], [upstream], 5000);
  if (databaseUrl) await dropTestDatabases([databaseUrl]);
  await rm(workDir, { recursive: true, force: true });
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    log(`\n${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- processes

async function startUpstream(): Promise<number> {
  const started = await spawnPortPrinter(resolve(import.meta.dir, 'lib/fake-openai-upstream.ts'), 'fake upstream');
  upstream = started.proc;
  return started.port;
}

async function startBenchGateway(upstreamPort: number): Promise<GatewayProcess> {
  const configPath = join(workDir, 'gateway.yaml');
  await writeFile(
    configPath,
    [
      'providers:',
      `  - {id: fake, kind: openai, base_url: "http://${HOST}:${upstreamPort}/v1", api_key: x}`,
      'models:',
      '  - {id: fake/bench, category: llm, upstream_model: bench, display_name: Bench, pricing: {input_per_mtok: 1, output_per_mtok: 2}}',
      '  - {id: fake/bench-slow, category: llm, upstream_model: bench-slow, display_name: Bench slow, pricing: {input_per_mtok: 1, output_per_mtok: 2}}',
      '',
    ].join('\n'),
  );
  const modeEnv = await MODES[0]!.env('bench_llm'); // postgres+redis: fresh database, unique Redis prefix
  databaseUrl = modeEnv.DATABASE_URL;
  gatewayEnv = {
    ...modeEnv,
    GATEWAY_CONFIG: configPath,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    ...(MAX_HTTP_REQUESTS ? { BUN_CONFIG_MAX_HTTP_REQUESTS: String(MAX_HTTP_REQUESTS) } : {}),
    ...benchGatewayEnv(),
  };
  gateway = await startGateway(gatewayEnv);
  return gateway;
}

async function rssMb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

// ---------------------------------------------------------------- requests

interface Case {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  stream: boolean;
}

const chatBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a benchmark.' },
      { role: 'user', content: 'Say twenty words.' },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  });
const messagesBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    system: 'You are a benchmark.',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'Say twenty words.' }],
    ...(stream ? { stream: true } : {}),
  });

async function writeLua(c: Case): Promise<string> {
  const path = join(workDir, `${c.name.replace(/\W+/g, '-')}.lua`);
  const headerLines = Object.entries({ 'Content-Type': 'application/json', ...c.headers })
    .map(([k, v]) => `wrk.headers[ [==[${k}]==] ] = [==[${v}]==]`)
    .join('\n');
  await writeFile(path, `wrk.method = "POST"\nwrk.body = [==[${c.body}]==]\n${headerLines}\n`);
  return path;
}

/** One request with fetch; checks status and that the body looks complete. */
async function check(c: Case): Promise<void> {
  const res = await fetch(c.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...c.headers },
    body: c.body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${text.slice(0, 500)}`);
  const complete = c.stream ? text.includes('[DONE]') || text.includes('message_stop') : text.includes('"usage"');
  if (!complete) throw new Error(`${c.name}: response does not look complete: ${text.slice(0, 500)}`);
}

/** Time from request start to the first non-empty body chunk, then the rest is drained; ms. */
async function firstByteMs(c: Case): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(c.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...c.headers },
    body: c.body,
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.body || res.status !== 200) throw new Error(`${c.name}: ${res.status}`);
  const reader = res.body.getReader();
  let first = await reader.read();
  while (!first.done && first.value.byteLength === 0) first = await reader.read();
  const t1 = performance.now();
  while (!(await reader.read()).done) {
    // drain
  }
  return t1 - t0;
}

/**
 * `n` sequential streamed requests per case, interleaved (one of each case per round) so every
 * case sees the same machine state; 20 warm-up rounds first. Bounded to 60 s.
 */
async function ttfb(cs: Case[], n: number): Promise<number[][]> {
  const samples = cs.map(() => [] as number[]);
  const deadline = Date.now() + 60_000;
  for (let i = 0; i < n + 20 && Date.now() < deadline; i++) {
    for (const [k, c] of cs.entries()) {
      const ms = await firstByteMs(c);
      if (i >= 20) samples[k]!.push(ms);
    }
  }
  return samples;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

// ---------------------------------------------------------------- main

try {
  const upstreamPort = await startUpstream();
  const gw = await startBenchGateway(upstreamPort);
  if (SECTIONS.has('streams')) streamsGateway = await startGateway(gatewayEnv);
  const { key } = await createAccount(gw, uniqueEmail('bench-llm'), 1_000_000);
  const direct = `http://${HOST}:${upstreamPort}`;
  const bearer = { authorization: `Bearer ${key}` };
  const anthropic = { 'x-api-key': key, 'anthropic-version': '2023-06-01' };

  const cases = {
    directChat: {
      name: 'chat direct',
      url: `${direct}/v1/chat/completions`,
      headers: {},
      body: chatBody('bench', false),
      stream: false,
    },
    gatewayChat: {
      name: 'chat via gateway',
      url: `${gw.url}/v1/chat/completions`,
      headers: bearer,
      body: chatBody('fake/bench', false),
      stream: false,
    },
    directChatStream: {
      name: 'chat stream direct',
      url: `${direct}/v1/chat/completions`,
      headers: {},
      body: chatBody('bench', true),
      stream: true,
    },
    gatewayChatStream: {
      name: 'chat stream via gateway',
      url: `${gw.url}/v1/chat/completions`,
      headers: bearer,
      body: chatBody('fake/bench', true),
      stream: true,
    },
    gatewayMessages: {
      name: 'messages via gateway',
      url: `${gw.url}/v1/messages`,
      headers: anthropic,
      body: messagesBody('fake/bench', false),
      stream: false,
    },
    gatewayMessagesStream: {
      name: 'messages stream via gateway',
      url: `${gw.url}/v1/messages`,
      headers: anthropic,
      body: messagesBody('fake/bench', true),
      stream: true,
    },
  } satisfies Record<string, Case>;
  for (const c of Object.values(cases)) await check(c);

  const verdict = (ok: boolean) => (ok ? 'met' : 'not met');
  const targets: string[] = [];

  // ---- time to first byte, first, on a quiet gateway
  if (SECTIONS.has('ttfb')) {
    const ttfbCases = [cases.directChatStream, cases.gatewayChatStream, cases.gatewayMessagesStream];
    const stats = (await ttfb(ttfbCases, TTFB_SAMPLES)).map((s) => {
      const sorted = s.sort((a, b) => a - b);
      return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    });
    const base = stats[0]!;
    const ttfbRows = ttfbCases.map((c, k) => {
      const st = stats[k]!;
      log(`TTFB ${c.name}: p50 ${round(st.p50, 3)} p99 ${round(st.p99, 3)} ms (${st.n} samples)`);
      return {
        path: c.name,
        samples: st.n,
        'TTFB p50 ms': round(st.p50, 3),
        'TTFB p99 ms': round(st.p99, 3),
        'added p50 ms': k === 0 ? '—' : round(st.p50 - base.p50, 3),
        'added p99 ms': k === 0 ? '—' : round(st.p99 - base.p99, 3),
      };
    });
    const addedChat = stats[1]!.p50 - base.p50;
    const addedMsg = stats[2]!.p50 - base.p50;
    console.log(
      `### Time to first byte (${TTFB_SAMPLES} sequential streamed requests per path with fetch, interleaved, quiet gateway)\n`,
    );
    console.log(table(ttfbRows));
    console.log('');
    targets.push(
      `≤ ${TARGET_ADDED_TTFB_MS} ms added to first byte (p50, chat passthrough) — ${verdict(addedChat <= TARGET_ADDED_TTFB_MS)} (chat ${round(addedChat, 3)} ms; messages→openai ${round(addedMsg, 3)} ms)`,
    );
  }

  // ---- wrk: (a) (b) (c)
  if (SECTIONS.has('wrk')) {
    const results = new Map<string, LoadResult>();
    const rows: Array<Record<string, string | number>> = [];
    const order: Array<[string, Case]> = [
      ['(a) chat', cases.directChat],
      ['(a) chat', cases.gatewayChat],
      ['(b) chat stream', cases.directChatStream],
      ['(b) chat stream', cases.gatewayChatStream],
      ['(c) messages→openai', cases.gatewayMessages],
      ['(c) messages→openai stream', cases.gatewayMessagesStream],
    ];
    for (const [group, c] of order) {
      const script = await writeLua(c);
      for (const connections of CONNECTIONS) {
        await runWrk({ url: c.url, connections, seconds: 2, script }); // warm-up
        const r = await runWrk({ url: c.url, connections, seconds: SECONDS, script });
        results.set(`${c.name}@${connections}`, r);
        rows.push({
          case: group,
          path: c.name,
          connections,
          'req/s': Math.round(r.requestsPerSec),
          'p50 ms': round(r.p50Ms),
          'p99 ms': round(r.p99Ms),
          'non-2xx': r.non2xx,
          'socket errors': r.errors,
          'gateway RSS MB': Math.round(await rssMb(gw.proc.pid)),
        });
        log(
          `${c.name} c=${connections}: ${Math.round(r.requestsPerSec)} req/s p50 ${round(r.p50Ms)} p99 ${round(r.p99Ms)} ms non-2xx ${r.non2xx} errors ${r.errors}`,
        );
      }
    }

    const added: Array<Record<string, string | number>> = [];
    const addedMet: boolean[] = [];
    for (const [label, via, base] of [
      ['chat (passthrough)', cases.gatewayChat, cases.directChat],
      ['chat stream (passthrough)', cases.gatewayChatStream, cases.directChatStream],
      ['messages→openai (translation)', cases.gatewayMessages, cases.directChat],
      ['messages→openai stream (translation)', cases.gatewayMessagesStream, cases.directChatStream],
    ] as const) {
      const g = results.get(`${via.name}@64`)!;
      const d = results.get(`${base.name}@64`)!;
      const p99 = g.p99Ms - d.p99Ms;
      const met = p99 <= TARGET_ADDED_P99_MS && g.non2xx === 0 && g.errors === 0;
      addedMet.push(met);
      added.push({
        case: label,
        'direct p50 ms': round(d.p50Ms),
        'gateway p50 ms': round(g.p50Ms),
        'added p50 ms': round(g.p50Ms - d.p50Ms),
        'direct p99 ms': round(d.p99Ms),
        'gateway p99 ms': round(g.p99Ms),
        'added p99 ms': round(p99),
        'req/s gateway/direct': `${Math.round(g.requestsPerSec)}/${Math.round(d.requestsPerSec)}`,
        [`added p99 ≤ ${TARGET_ADDED_P99_MS} ms`]: verdict(met),
      });
    }
    console.log(
      `### LLM relay — gateway vs direct to a zero-latency fake OpenAI upstream (wrk, ${SECONDS} s per row after 2 s warm-up)\n`,
    );
    console.log(table(rows));
    console.log('\n### Added latency at 64 connections\n');
    console.log(table(added));
    console.log('');
    targets.push(
      `added p99 ≤ ${TARGET_ADDED_P99_MS} ms at 64 connections — ${verdict(addedMet.every(Boolean))} (${added.map((r) => `${r.case} ${r['added p99 ms']} ms`).join('; ')})`,
    );
  }

  // ---- N concurrent slow streams, on the second gateway (untouched so far) so the figure is not
  // the heap left over from the runs above
  const loadPeak = await peakRssMb(gw.proc.pid);
  let streamsHwm = 0;
  if (streamsGateway) {
    const gw2 = streamsGateway;
    await check({ ...cases.gatewayChatStream, url: `${gw2.url}/v1/chat/completions` });
    await Bun.sleep(500);
    const rssBefore = await rssMb(gw2.proc.pid);
    let rssPeak = rssBefore;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        rssPeak = Math.max(rssPeak, await rssMb(gw2.proc.pid).catch(() => 0));
        await Bun.sleep(100);
      }
    })();
    const slowBody = chatBody('fake/bench-slow', true);
    const started = performance.now();
    const deadline = Date.now() + 90_000;
    const pending: Array<Promise<StreamResult>> = [];
    for (let i = 0; i < STREAMS; i++) {
      pending.push(rawStream(HOST, gw2.port, '/v1/chat/completions', bearer, slowBody, deadline));
      if (i % 100 === 99) await Bun.sleep(5); // let the accept queue breathe; all open within ~0.1 s
    }
    const streamResults = await Promise.all(pending);
    const wall = performance.now() - started;
    sampling = false;
    await sampler;
    const completed = streamResults.filter((r) => r.ok);
    const errors = new Map<string, number>();
    for (const r of streamResults) if (!r.ok) errors.set(r.error ?? '?', (errors.get(r.error ?? '?') ?? 0) + 1);
    const durations = completed.map((r) => r.ms / 1000).sort((a, b) => a - b);
    streamsHwm = await peakRssMb(gw2.proc.pid);
    // Concurrent means every stream ran alongside the others: ~10 s each, not queued behind others.
    const maxStreamS = durations.at(-1) ?? Number.NaN;
    const allConcurrent = completed.length === STREAMS && maxStreamS <= 15;
    const streamsMet = allConcurrent && rssPeak <= TARGET_STREAMS_RSS_MB;
    const streamRow = {
      streams: STREAMS,
      completed: completed.length,
      errors: streamResults.length - completed.length,
      'wall s': round(wall / 1000, 1),
      'stream s p50/max': `${round(percentile(durations, 50), 1)}/${round(maxStreamS, 1)}`,
      'RSS before MB': Math.round(rssBefore),
      'peak RSS during MB': Math.round(rssPeak),
      'VmHWM MB': streamsHwm,
    };
    log(
      `streams: ${JSON.stringify(streamRow)}${errors.size ? ` errors: ${JSON.stringify(Object.fromEntries(errors))}` : ''}`,
    );
    console.log(
      `### ${STREAMS} concurrent slow streams through a second, until then idle gateway (10 deltas 1 s apart; gateway BUN_CONFIG_MAX_HTTP_REQUESTS=${MAX_HTTP_REQUESTS || 'unset (Bun default 256)'})\n`,
    );
    console.log(table([streamRow]));
    if (errors.size) console.log(`\nstream errors: ${[...errors].map(([e, n]) => `${n}× ${e}`).join(', ')}`);
    console.log('');
    targets.push(
      `${STREAMS} concurrent streams within ${TARGET_STREAMS_RSS_MB} MB RSS — ${verdict(streamsMet)} (${completed.length}/${STREAMS} completed,` +
        ` longest ${round(maxStreamS, 1)} s${allConcurrent ? '' : ' — streams queued instead of running concurrently'}, peak ${Math.round(rssPeak)} MB)`,
    );
  }

  console.log(`Targets: ${targets.join('; ')}.`);
  console.log(
    `\nGateway peak RSS overall (VmHWM): ${Math.max(loadPeak, streamsHwm)} MB (TTFB + wrk process ${loadPeak} MB${SECTIONS.has('streams') ? `; concurrent-streams process ${streamsHwm} MB` : ''}).`,
  );
} catch (err) {
  if (gateway) log(`gateway output:\n${gateway.output().slice(-4000)}`);
  throw err;
} finally {
  await cleanup();
}
