/**
 * The processes an LLM latency benchmark needs, started pinned (bench/lib/cpu-pin.ts): the
 * zero-latency fake OpenAI-compatible upstream (bench/lib/fake-openai-upstream.ts) on the load
 * core, and the gateway on its own core, in Postgres+Redis mode (a fresh database, a unique Redis
 * key prefix) or with `mode: 'embedded'` on the embedded default (a fresh `DATA_DIR`), with a
 * config of one `openai` provider pointing at the fake. With `pinServices`, the local Postgres and
 * Redis servers move to the load core too until `stop()`. `stop()` ends the processes and
 * drops the database; it is also run on SIGINT/SIGTERM, and kills whatever overruns 5 s.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { createAccount, uniqueEmail } from '../../tests/helpers/api.ts';
import { MODES, startGateway, type GatewayProcess, type Mode } from '../../tests/helpers/gateway-process.ts';
import { dropTestDatabases } from '../../tests/helpers/services.ts';
import { writeBenchConfig } from './sandbox-config.ts';
import { stopProcesses } from './stop-processes.ts';
import { GATEWAY_CORE, LOAD_CORE, pin, pinServices } from './cpu-pin.ts';
import type { H2loadTarget } from './h2load.ts';
import { selfSignedCert } from '../../tests/helpers/self-signed-cert.ts';
import { spawnPortPrinter } from './spawn-port-printer.ts';

export const HOST = '127.0.0.1';

export interface LlmBenchStack {
  gateway: GatewayProcess;
  upstreamPort: number;
  /** Whether the processes were pinned (two cores and taskset present). */
  pinned: boolean;
  /** An account with a large balance, and its key. */
  newKey(label: string): Promise<string>;
  /**
   * Non-streamed (or streamed) chat completion, through the gateway with `key` or direct to the
   * fake; `paced`: the stream's events each written on its own, 1 ms apart, as a real LLM's come.
   */
  chat(via: 'gateway' | 'direct', opts?: { key?: string; stream?: boolean; paced?: boolean }): H2loadTarget;
  stop(): Promise<void>;
}

export const chatBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a benchmark.' },
      { role: 'user', content: 'Say twenty words.' },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  });

/** `BENCH_GATEWAY_ENV`: a JSON object of variables every benchmark gateway also starts with. */
export function benchGatewayEnv(): Record<string, string> {
  const text = process.env.BENCH_GATEWAY_ENV;
  if (!text) return {};
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('BENCH_GATEWAY_ENV must be a JSON object of strings');
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
}

export async function startLlmBenchStack(
  label: string,
  opts: {
    env?: Record<string, string>;
    pin?: boolean;
    /** Move the local Postgres and Redis to the load core as well (`pinServices`); needs `pin`. */
    pinServices?: boolean;
    mode?: Mode['name'];
    bunArgs?: string[];
    /** Also serve the built-in sandbox provider's `sandbox/echo` (an LLM with no upstream call). */
    sandbox?: boolean;
    /** The fake upstream speaks HTTPS (a throwaway certificate the gateway is told to trust), as providers do. */
    tls?: boolean;
  } = {},
): Promise<LlmBenchStack> {
  const workDir = await mkdtemp(join(tmpdir(), `bench-${label}-`));
  // The benchmark itself and all it spawns from here on (h2load, the fake upstream) run on the load core.
  const pinned = opts.pin !== false && pin(process.pid, LOAD_CORE);
  // Postgres and Redis join the load core, so the gateway's core is its own (given back at stop).
  const unpinServices = pinned && opts.pinServices ? pinServices(LOAD_CORE) : () => {};
  let upstream: Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
  let gateway: GatewayProcess | undefined;
  let databaseUrl: string | undefined;
  let dataDir: string | undefined;
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopProcesses([gateway], [upstream], 5000);
    unpinServices();
    if (databaseUrl) await dropTestDatabases([databaseUrl]);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      process.stderr.write(`\n${sig}: cleaning up\n`);
      void stop().finally(() => process.exit(130));
    });

  try {
    const cert = opts.tls ? await selfSignedCert(workDir) : undefined;
    const started = await spawnPortPrinter(
      resolve(import.meta.dir, 'fake-openai-upstream.ts'),
      'fake upstream',
      cert ? { TLS_CERT_FILE: cert.certFile, TLS_KEY_FILE: cert.keyFile } : {},
    );
    upstream = started.proc;
    const upstreamPort = started.port;
    const configPath = await writeBenchConfig(workDir, { sandbox: opts.sandbox, upstreamPort, upstreamTls: !!cert });
    // postgres+redis: a fresh database and Redis prefix; embedded: a fresh DATA_DIR (removed by stop).
    const mode = MODES.find((m) => m.name === (opts.mode ?? 'postgres+redis')) ?? MODES[0]!;
    const modeEnv = await mode.env(`bench_${label}`);
    databaseUrl = modeEnv.DATABASE_URL;
    dataDir = modeEnv.DATA_DIR;
    gateway = await startGateway(
      {
        ...modeEnv,
        GATEWAY_CONFIG: configPath,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '100000000',
        ...(cert ? { NODE_EXTRA_CA_CERTS: cert.certFile } : {}),
        ...opts.env,
        // A setting to try in any benchmark without editing it, e.g. '{"BUN_JSC_useFTLJIT":"1"}'.
        ...benchGatewayEnv(),
      },
      { bunArgs: opts.bunArgs },
    );
    if (pinned) pin(gateway.proc.pid, GATEWAY_CORE);
    const gw = gateway;
    return {
      gateway: gw,
      upstreamPort,
      pinned,
      newKey: async (name) => (await createAccount(gw, uniqueEmail(name), 1_000_000)).key,
      chat(via, opts = {}): H2loadTarget {
        const stream = opts.stream ?? false;
        const paced = stream && opts.paced === true;
        if (via === 'direct')
          return {
            url: `${cert ? 'https' : 'http'}://${HOST}:${upstreamPort}/v1/chat/completions`,
            headers: {},
            body: chatBody(paced ? 'bench-paced' : 'bench', stream),
          };
        return {
          url: `${gw.url}/v1/chat/completions`,
          headers: { authorization: `Bearer ${opts.key ?? ''}` },
          body: chatBody(paced ? 'fake/paced' : 'fake/bench', stream),
        };
      },
      stop,
    };
  } catch (err) {
    if (gateway) process.stderr.write(`gateway output:\n${gateway.output().slice(-4000)}\n`);
    await stop();
    throw err;
  }
}

/** One request with fetch: the target answers 200 with a complete body, or this throws. */
export async function checkTarget(target: H2loadTarget, stream: boolean): Promise<void> {
  const res = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${target.url}: ${res.status} ${text.slice(0, 500)}`);
  if (!(stream ? text.includes('[DONE]') : text.includes('"usage"')))
    throw new Error(`${target.url}: the answer does not look complete: ${text.slice(0, 500)}`);
}
