import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { createAccount, uniqueEmail } from '../helpers/api.ts';
import { startFakeLlmUpstream } from '../helpers/fake-llm-upstream.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { parsePrometheusText, sampleSum } from '../helpers/prometheus-text.ts';
import { REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';

interface LogLine {
  msg: string;
  worker?: number;
  pid?: number;
  request_id?: string;
  status?: number;
  [field: string]: unknown;
}

/** The JSON log lines a gateway (all its processes: they share its stdout) printed so far. */
function logLines(gw: GatewayProcess): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of gw.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // a line still being written
    }
  }
  return lines;
}

async function waitFor<T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** The pid each worker slot announced in its latest `listening` line. */
function listeningPids(gw: GatewayProcess): Map<number, number> {
  const pids = new Map<number, number>();
  for (const line of logLines(gw))
    if (line.msg === 'listening' && line.worker !== undefined && line.pid) pids.set(line.worker, line.pid);
  return pids;
}

/**
 * `n` requests, each on a new connection (the kernel picks a listening process per connection),
 * then the pid that logged each one, found by its `x-request-id`.
 */
async function servedBy(
  gw: GatewayProcess,
  n: number,
  path: string,
  key?: string,
): Promise<Array<{ status: number; pid: number }>> {
  const sent: Array<{ status: number; requestId: string }> = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${gw.url}${path}`, {
      keepalive: false,
      headers: { connection: 'close', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    });
    await res.arrayBuffer();
    sent.push({ status: res.status, requestId: res.headers.get('x-request-id') ?? '' });
  }
  const pids = await servedByIds(
    gw,
    sent.map((s) => s.requestId),
  );
  return sent.map((s, i) => ({ status: s.status, pid: pids[i]! }));
}

/** The pid that logged each request id. */
async function servedByIds(gw: GatewayProcess, requestIds: string[]): Promise<number[]> {
  return waitFor(`log lines of ${requestIds.length} requests`, () => {
    const pidOf = new Map<string, number>();
    for (const line of logLines(gw))
      if (line.msg === 'request' && line.request_id && line.pid) pidOf.set(line.request_id, line.pid);
    const found = requestIds.map((id) => pidOf.get(id) ?? 0);
    return found.every((pid) => pid !== 0) ? found : undefined;
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function sharedEnv(label: string): Promise<Record<string, string>> {
  const databaseUrl = await createTestDatabase(label);
  return { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:` };
}

describe('WORKERS=2 on Postgres+Redis', () => {
  let gw: GatewayProcess;
  let env: Record<string, string>;
  let pids: Map<number, number>;

  beforeAll(async () => {
    env = await sharedEnv('workers');
    // The refused-key probes below are failed authentications from one address: not throttled here.
    gw = await startGateway({ ...env, WORKERS: '2', AUTH_FAILURES_PER_MINUTE: '1000' });
    pids = await waitFor('both processes listening', () => {
      const found = listeningPids(gw);
      return found.size === 2 ? found : undefined;
    });
  });
  afterAll(async () => {
    if (gw.proc.exitCode === null) await gw.stop('SIGKILL');
  });

  test('one migration run and one first-start key, from the primary; both processes serve the port', async () => {
    expect(pids.get(0)).toBe(gw.proc.pid);
    expect(pids.get(1)).not.toBe(gw.proc.pid);
    const migrations = await queryDatabase<{ name: string }>(env.DATABASE_URL!, 'select name from kysely_migration');
    expect(migrations.map((m) => m.name)).toEqual(Object.keys(MIGRATIONS));
    const migrationLines = logLines(gw).filter((l) => l.msg === 'migrations applied');
    expect(migrationLines.map((l) => l.worker)).toEqual([0]);
    expect(gw.output().match(/API key \(shown once, keep it\)/g)).toHaveLength(1);

    const served = await servedBy(gw, 40, '/healthz');
    expect(served.every((s) => s.status === 200)).toBe(true);
    expect(new Set(served.map((s) => s.pid))).toEqual(new Set([pids.get(0)!, pids.get(1)!]));
  });

  test('a /metrics scrape on either process counts the requests both served', async () => {
    const healthz = { method: 'GET', route: '/healthz', status: '200' };
    const logged = logLines(gw).filter((l) => l.msg === 'request' && l.path === '/healthz' && l.status === 200);
    expect(new Set(logged.map((l) => l.pid)).size).toBe(2);
    // Scrapes on new connections until each process has answered at least two of them.
    const answeredBy = new Map<number, number>();
    for (let i = 0; i < 60 && [...answeredBy.values()].filter((n) => n >= 2).length < 2; i++) {
      const res = await fetch(`${gw.url}/metrics`, { keepalive: false, headers: { connection: 'close' } });
      expect(res.status).toBe(200);
      const samples = parsePrometheusText(await res.text());
      expect(sampleSum(samples, 'gateway_http_requests_total', healthz)).toBe(logged.length);
      const [served] = await servedByIds(gw, [res.headers.get('x-request-id') ?? '']);
      answeredBy.set(served!, (answeredBy.get(served!) ?? 0) + 1);
    }
    expect(answeredBy.size).toBe(2);
  });

  test('a key regenerated through one process is refused at once by both', async () => {
    const acct = await createAccount(gw, uniqueEmail('workers'));
    // Warm both processes' key caches: requests until each has answered the key with a 200.
    const warmed = await servedBy(gw, 30, '/v1/account', acct.key);
    expect(warmed.every((s) => s.status === 200)).toBe(true);
    expect(new Set(warmed.map((s) => s.pid)).size).toBe(2);

    const regen = await fetch(`${gw.url}/v1/account/api-key/regenerate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.key}` },
    });
    expect(regen.status).toBe(200);
    const { data } = (await regen.json()) as { data: { api_key: string } };

    const refused = await servedBy(gw, 30, '/v1/account', acct.key);
    expect(refused.map((s) => s.status)).toEqual(refused.map(() => 401));
    expect(new Set(refused.map((s) => s.pid)).size).toBe(2);
    const accepted = await servedBy(gw, 20, '/v1/account', data.api_key);
    expect(accepted.every((s) => s.status === 200)).toBe(true);
  });

  test('a killed worker is restarted and serves again', async () => {
    const old = pids.get(1)!;
    process.kill(old, 'SIGKILL');
    const restarted = await waitFor('a new worker 1', () => {
      const pid = listeningPids(gw).get(1);
      return pid !== undefined && pid !== old ? pid : undefined;
    });
    const crash = logLines(gw).find((l) => l.msg === 'worker exited; restarting');
    expect(crash).toMatchObject({ worker: 0, worker_slot: 1, worker_pid: old, signal: 'SIGKILL' });
    expect(typeof crash?.restart_in_ms).toBe('number');
    pids.set(1, restarted);
    const served = await servedBy(gw, 40, '/healthz');
    expect(new Set(served.map((s) => s.pid))).toEqual(new Set([pids.get(0)!, restarted]));
  });

  test('SIGTERM stops every process, drained, with exit code 0', async () => {
    const worker = pids.get(1)!;
    expect(await gw.stop('SIGTERM')).toBe(0);
    expect(alive(worker)).toBe(false);
    const stopped = logLines(gw).filter((l) => l.msg === 'stopped');
    expect(new Set(stopped.map((l) => l.pid))).toEqual(new Set([gw.proc.pid, worker]));
  });
});

describe('WORKERS: draining on SIGTERM', () => {
  test('calls in flight on both processes are answered in full before the gateway exits 0', async () => {
    const upstream = await startFakeLlmUpstream('openai');
    const dir = await mkdtemp(join(tmpdir(), 'gw-workers-drain-'));
    const config = join(dir, 'gateway.json');
    await writeFile(
      config,
      JSON.stringify({
        providers: [{ id: 'slow', kind: 'openai', base_url: upstream.baseUrl, api_key: upstream.apiKey }],
        models: [
          // The fake answers this upstream model's calls with headers after 3 s.
          {
            id: 'slow/model',
            category: 'llm',
            upstream_model: 'slow-headers',
            display_name: 'Slow',
            pricing: { input_per_mtok: 1, output_per_mtok: 1 },
          },
        ],
      }),
    );
    const gw = await startGateway({ ...(await sharedEnv('workers_drain')), WORKERS: '2', GATEWAY_CONFIG: config });
    try {
      await waitFor('both processes listening', () => (listeningPids(gw).size === 2 ? true : undefined));
      const acct = await createAccount(gw, uniqueEmail('drain'));
      const marker = `drain-${Date.now()}`;
      const calls = Array.from({ length: 16 }, async () => {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          keepalive: false,
          headers: { connection: 'close', authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'slow/model', messages: [{ role: 'user', content: marker }] }),
        });
        const body = (await res.json()) as { choices?: Array<{ message: { content: string } }> };
        return {
          status: res.status,
          text: body.choices?.[0]?.message.content ?? '',
          id: res.headers.get('x-request-id') ?? '',
        };
      });
      // Every call has reached the upstream (so is in flight on some process) before the signal.
      await upstream.waitFor(marker, 16, 10_000);
      const exited = gw.stop('SIGTERM');
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(answers.every((a) => a.text.length > 0)).toBe(true);
      expect(await exited).toBe(0);
      const pids = await servedByIds(
        gw,
        answers.map((a) => a.id),
      );
      expect(new Set(pids).size).toBe(2);
    } finally {
      if (gw.proc.exitCode === null) await gw.stop('SIGKILL');
      await upstream.stop();
    }
  });
});

describe('WORKERS: the primary killed outright', () => {
  test('its workers notice, drain and exit by themselves', async () => {
    const gw = await startGateway({ ...(await sharedEnv('workers_orphan')), WORKERS: '2' });
    try {
      const worker = await waitFor('worker 1 listening', () => listeningPids(gw).get(1));
      expect(await gw.stop('SIGKILL')).not.toBe(0);
      await waitFor('the orphaned worker to exit', () => (alive(worker) ? undefined : true), 15_000);
    } finally {
      if (gw.proc.exitCode === null) await gw.stop('SIGKILL');
    }
  });
});

describe('WORKERS: stopped at once', () => {
  test('SIGTERM as soon as the primary answers, its worker still starting: exit 0, nothing left running', async () => {
    const gw = await startGateway({ ...(await sharedEnv('workers_early')), WORKERS: '2' });
    const started = await waitFor('the worker spawned', () => logLines(gw).find((l) => l.msg === 'worker started'));
    expect(await gw.stop('SIGTERM')).toBe(0);
    expect(alive(Number(started.worker_pid))).toBe(false);
  });
});

describe('WORKERS refusals', () => {
  async function refused(env: Record<string, string>): Promise<{ code: number; output: string }> {
    const gw = await startGateway(env, { waitReady: false });
    const code = await gw.proc.exited;
    await Bun.sleep(20);
    return { code, output: gw.output() };
  }

  test('above 1 on the embedded database or the in-process store, or not a positive integer: exit 1, variable named', async () => {
    const embedded = await refused({ WORKERS: '2' });
    expect(embedded.code).toBe(1);
    expect(embedded.output).toContain('WORKERS=2 needs DATABASE_URL');
    const noRedis = await refused({ WORKERS: '2', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/unused' });
    expect(noRedis.code).toBe(1);
    expect(noRedis.output).toContain('WORKERS=2 needs REDIS_URL');
    const zero = await refused({ WORKERS: '0' });
    expect(zero.code).toBe(1);
    expect(zero.output).toContain('WORKERS');
  });
});
