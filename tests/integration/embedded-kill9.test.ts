import { afterAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { callsUntilKilled } from '../helpers/calls-until-killed.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * The embedded default's durability (docs/operations.md, "Modes"): PGlite commits are synced
 * before the gateway answers, so a gateway killed with SIGKILL under load (JSON and streamed
 * calls) restarts on the same
 * DATA_DIR with every answered call recorded and charged, and its balance equal to what the
 * records add up to. (That the commits reach the disk, not only the OS, is
 * tests/unit/pglite-durable.test.ts; a power cut cannot be tested here.)
 */
const running: GatewayProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(running.map((gw) => gw.stop('SIGKILL')));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('embedded default (PGlite, in-process store)', () => {
  test('kill -9 under load: every call the client received in full has its record and charge after restart', async () => {
    const embedded = MODES.find((m) => m.name === 'embedded');
    if (!embedded) throw new Error('no embedded mode in tests/helpers/gateway-process.ts');
    const modeEnv = await embedded.env('kill9');
    const dataDir = modeEnv.DATA_DIR;
    if (!dataDir) throw new Error('the embedded mode gave no DATA_DIR');
    dirs.push(dataDir);
    const env = { ...modeEnv, LOG_LEVEL: 'warn' };
    const gw = await startGateway(env);
    running.push(gw);
    const { key } = await createAccount(gw, uniqueEmail('embkill9'), 100);

    const answered = await callsUntilKilled(gw, key, { workers: 16, forMs: 1_500 });
    expect(answered.length).toBeGreaterThan(100);

    const restarted = await startGateway(env);
    running.push(restarted);
    const tasks: Array<{ cost: number; output?: { id?: string } }> = [];
    for (let page = 1; ; page++) {
      const res = await api(restarted, 'GET', `/v1/tasks?category=llm&page_size=100&page=${page}`, { key });
      expect(res.status).toBe(200);
      tasks.push(...res.body.data);
      if (!res.body.pagination.has_next) break;
    }
    const recorded = new Set(tasks.map((t) => t.output?.id));
    expect(answered.filter((id) => !recorded.has(id))).toEqual([]);
    for (const task of tasks) expect(task.cost).toBeGreaterThan(0);
    // The balance is the top-up less every recorded charge: nothing charged twice or lost.
    const spent = tasks.reduce((sum, t) => sum + t.cost, 0);
    const account = await api(restarted, 'GET', '/v1/account', { key });
    expect(account.status).toBe(200);
    expect(account.body.data.balance_usd).toBeCloseTo(100 - spent, 6);
  }, 120_000);
});
