import { afterAll, describe, expect, test } from 'bun:test';
import pg from 'pg';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { type GatewayProcess, startGateway } from '../helpers/gateway-process.ts';
import { POSTGRES_URL, REDIS_URL, createTestDatabase } from '../helpers/services.ts';

/**
 * A Postgres restart or failover closes every connection, idle ones included. node-postgres
 * reports an idle connection's end as an 'error' event on its pool, which kills the process when
 * nobody listens: every gateway would die with its database's restart. After the connections
 * are cut, the gateway stays up and the next requests reconnect.
 */
const running: GatewayProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((gw) => gw.stop('SIGKILL')));
});

describe('database connections cut (postgres+redis)', () => {
  test('every connection terminated by the server: the process stays up and later requests succeed', async () => {
    const databaseUrl = await createTestDatabase('pgcut');
    const gw = await startGateway({
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      LOG_LEVEL: 'warn',
    });
    running.push(gw);
    const { key } = await createAccount(gw, uniqueEmail('pgcut'), 5);
    const chat = () =>
      api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'before and after the cut' }] },
      });
    // Open connections in both clients: node-postgres (lists) and Bun's (the settlement).
    for (let i = 0; i < 5; i++) {
      expect((await chat()).status).toBe(200);
      expect((await api(gw, 'GET', '/v1/tasks?category=llm', { key })).status).toBe(200);
    }
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const cut = await admin.query<{ n: string }>(
      'select count(pg_terminate_backend(pid)) as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [new URL(databaseUrl).pathname.slice(1)],
    );
    await admin.end();
    expect(Number(cut.rows[0]?.n)).toBeGreaterThan(1);
    await Bun.sleep(300);
    expect(gw.proc.exitCode).toBeNull();
    for (let i = 0; i < 5; i++) {
      expect((await chat()).status).toBe(200);
      const list = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key });
      expect(list.status).toBe(200);
    }
    const list = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key });
    expect(list.body.data.length).toBe(10);
    expect(gw.proc.exitCode).toBeNull();
    expect(gw.output()).toContain('idle database connection lost');
  }, 60_000);
});
