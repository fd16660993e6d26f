import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { REDIS_URL, createTestDatabase } from './services.ts';

const ROOT = resolve(import.meta.dir, '../..');
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/**
 * What `npm start` sets before Bun starts (package.json; tests/unit/npm-start-env.test.ts keeps
 * the two equal), so a gateway under test or benchmark runs as a started one does:
 * - Bun caps concurrent outbound fetches at 256 otherwise;
 * - JavaScriptCore sizes its collector for a 1 GB machine, not the host (docs/configuration.md).
 */
export const NPM_START_ENV: Readonly<Record<string, string>> = {
  BUN_CONFIG_MAX_HTTP_REQUESTS: '4096',
  BUN_JSC_forceRAMSize: '1073741824',
};

export interface GatewayProcess {
  url: string;
  port: number;
  env: Record<string, string>;
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Everything the process printed so far (stdout + stderr). */
  output(): string;
  /** The key printed on a first start, if any. */
  firstKey(): string | undefined;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port ?? 0;
  probe.stop(true);
  return port;
}

/** Starts `bun src/main.ts` as its own process and waits until `/healthz` answers. */
export async function startGateway(
  env: Record<string, string>,
  opts: {
    waitReady?: boolean;
    /** Flags for Bun itself (a benchmark's `--cpu-prof`). */
    bunArgs?: string[];
    /** A command Bun runs under (a benchmark's `valgrind --tool=callgrind …`). */
    wrapper?: string[];
    /** How long to wait for `/healthz` (a gateway under valgrind starts 50 times slower). */
    readyTimeoutMs?: number;
    /** Another checkout whose `src/main.ts` runs instead of this one's (a before/after benchmark). */
    root?: string;
  } = {},
): Promise<GatewayProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    ...NPM_START_ENV,
    // One process per gateway unless a test asks for more: WORKERS defaults to one per core on
    // Postgres+Redis, which would multiply every suite's processes on a shared machine.
    WORKERS: '1',
    ...env,
  };
  const root = opts.root ?? ROOT;
  const command = [
    ...(opts.wrapper ?? []),
    process.execPath,
    ...(opts.bunArgs ?? []),
    'run',
    join(root, 'src/main.ts'),
  ];
  const proc = Bun.spawn(command, {
    cwd: root,
    env: fullEnv,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let text = '';
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  const url = `http://127.0.0.1:${port}`;
  const gateway: GatewayProcess = {
    url,
    port,
    env: fullEnv,
    proc,
    output: () => text,
    firstKey: () => /API key \(shown once, keep it\): (\S+)/.exec(text)?.[1],
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && !proc.killed) proc.kill(signal);
      return proc.exited;
    },
  };
  if (opts.waitReady === false) return gateway;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`gateway exited with ${proc.exitCode}:\n${text}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return gateway;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  await gateway.stop('SIGKILL');
  throw new Error(`gateway did not become healthy within ${readyTimeoutMs / 1000} s:\n${text}`);
}

export interface Mode {
  name: 'postgres+redis' | 'embedded';
  /** Environment for a fresh, isolated gateway in this mode. */
  env(label: string): Promise<Record<string, string>>;
}

/** Every integration suite runs in both modes of docs/operations.md (Postgres+Redis, and the embedded default). */
export const MODES: Mode[] = [
  {
    name: 'postgres+redis',
    async env(label) {
      const databaseUrl = await createTestDatabase(label);
      return { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:` };
    },
  },
  {
    name: 'embedded',
    async env(label) {
      return { DATA_DIR: await mkdtemp(join(tmpdir(), `gw-${label}-`)) };
    },
  },
];
