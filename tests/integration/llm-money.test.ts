import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import Anthropic from '@anthropic-ai/sdk';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { callsUntilKilled } from '../helpers/calls-until-killed.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';

/**
 * LLM money end to end (docs/money.md): a call holds its worst case before it runs, so parallel
 * calls never overdraw; every call answered to the client is billed, even across kill -9; and a
 * prompt full of what Postgres cannot store is answered, recorded and billed like any other.
 */
const running: GatewayProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((gw) => gw.stop('SIGKILL')));
});

async function postgresGateway(label: string, extra: Record<string, string> = {}) {
  const databaseUrl = await createTestDatabase(label);
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
    LOG_LEVEL: 'warn',
    ...extra,
  };
  const gw = await startGateway(env);
  running.push(gw);
  return { gw, databaseUrl, env };
}

async function ledgerAndBalance(databaseUrl: string, userId: number) {
  const [account] = await queryDatabase<{ balance_usd: string; reserved_usd: string }>(
    databaseUrl,
    'select balance_usd, reserved_usd from accounts where id = $1',
    [userId],
  );
  const [ledger] = await queryDatabase<{ total: string }>(
    databaseUrl,
    'select coalesce(sum(amount_usd), 0) as total from ledger_entries where account_id = $1',
    [userId],
  );
  return {
    balance: Number(account?.balance_usd),
    reserved: Number(account?.reserved_usd),
    ledger: Number(ledger?.total),
    balanceText: account?.balance_usd,
    ledgerText: Number(ledger?.total).toFixed(10),
  };
}

/** A config file with one OpenAI-compatible provider on loopback `port` and its LLM models. */
async function openaiUpstreamConfig(
  provider: string,
  port: number | undefined,
  models: Array<{ id: string; upstream: string; pricing: object }>,
): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), `gw-${provider}-`)), 'gateway.json');
  await writeFile(
    path,
    JSON.stringify({
      providers: [{ id: provider, kind: 'openai', base_url: `http://127.0.0.1:${port}/v1`, api_key: 'k' }],
      models: models.map((m) => ({
        id: m.id,
        category: 'llm',
        upstream_model: m.upstream,
        display_name: m.id,
        pricing: m.pricing,
      })),
    }),
  );
  return path;
}

describe('LLM money (postgres+redis)', () => {
  test('64 parallel streams on $0.01 never take the balance below zero; the refused get 402 naming max_tokens', async () => {
    const { gw, databaseUrl } = await postgresGateway('llmoverdraft');
    const { userId, key } = await createAccount(gw, uniqueEmail('overdraft'), 0.01);
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const prompt = 'spend '.repeat(200);
    const outcomes = await Promise.all(
      Array.from({ length: 64 }, async () => {
        try {
          const stream = await openai.chat.completions.create({
            model: 'sandbox/echo',
            messages: [{ role: 'user', content: prompt }],
            max_tokens: 1000,
            stream: true,
          });
          for await (const _ of stream) {
            // drain
          }
          return 'ok';
        } catch (err) {
          return err instanceof OpenAI.APIError ? err : String(err);
        }
      }),
    );
    const ok = outcomes.filter((o) => o === 'ok').length;
    const refused = outcomes.filter((o): o is InstanceType<typeof OpenAI.APIError> => o instanceof OpenAI.APIError);
    // Each call holds 1208 input bytes at $1/M + 1000 output tokens at $2/M ≈ $0.0032: three fit in $0.01.
    expect(ok).toBeGreaterThanOrEqual(3);
    expect(ok + refused.length).toBe(64);
    expect(refused.map((e) => `${e.status} ${e.message}`).filter((text) => !text.startsWith('402'))).toEqual([]);
    // The instance's lease on the account goes back once idle.
    await Bun.sleep(1_000);
    const m = await ledgerAndBalance(databaseUrl, userId);
    expect(m.balance).toBeGreaterThanOrEqual(0);
    expect(m.reserved).toBe(0);
    expect(m.balanceText).toBe(m.ledgerText);
    // Every admitted call was billed its real cost.
    const [tasks] = await queryDatabase<{ n: string; cost: string }>(
      databaseUrl,
      "select count(*) as n, coalesce(sum(cost_usd), 0) as cost from tasks where account_id = $1 and category = 'llm'",
      [userId],
    );
    expect(Number(tasks?.n)).toBe(ok);
    expect(Number(tasks?.cost)).toBeCloseTo(0.01 - m.balance, 10);

    // Asking for more than is left: the 402 says how many output tokens fit, and that many do.
    const greedy = await openai.chat.completions
      .create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100_000 })
      .catch((e: unknown) => e);
    expect(greedy).toBeInstanceOf(OpenAI.APIError);
    const fits = Number(/at most (\d+) output tokens/.exec((greedy as Error).message)?.[1]);
    expect(fits).toBeGreaterThan(0);
    const modest = await openai.chat.completions.create({
      model: 'sandbox/echo',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: fits,
    });
    expect(modest.choices[0]?.message.content).toBe('echo: hi');
  });

  test('an Anthropic client over budget gets a 402 its SDK raises as an API error', async () => {
    const { gw } = await postgresGateway('llm402');
    const { key } = await createAccount(gw, uniqueEmail('poor'), 0.00001);
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const err = await anthropic.messages
      .create({ model: 'sandbox/echo', max_tokens: 4096, messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
  });

  test('NUL, lone surrogates and odd keys in a prompt: answered, recorded and billed; others keep being billed', async () => {
    const { gw, databaseUrl } = await postgresGateway('llmhostile');
    const hostile = await createAccount(gw, uniqueEmail('hostile'), 1);
    const other = await createAccount(gw, uniqueEmail('other'), 1);
    const contents = ['nul \u0000 in text', 'lone \ud800 high', 'lone \udc00 low', '\u0000'.repeat(100)];
    const answers = await Promise.all([
      ...contents.map((content) =>
        api(gw, 'POST', '/v1/chat/completions', {
          key: hostile.key,
          rawBody: `{"model":"sandbox/echo","messages":[{"role":"user","content":${JSON.stringify(content)}}],"x\\u0000":1}`,
        }),
      ),
      ...Array.from({ length: 8 }, (_, i) =>
        api(gw, 'POST', '/v1/chat/completions', {
          key: other.key,
          body: { model: 'sandbox/echo', messages: [{ role: 'user', content: `plain ${i}` }] },
        }),
      ),
    ]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    for (const who of [hostile, other]) {
      const [row] = await queryDatabase<{ n: string }>(
        databaseUrl,
        "select count(*) as n from tasks where account_id = $1 and category = 'llm' and cost_usd > 0",
        [who.userId],
      );
      expect(Number(row?.n)).toBe(who === hostile ? contents.length : 8);
      const m = await ledgerAndBalance(databaseUrl, who.userId);
      expect(m.balance).toBeLessThan(1);
      expect(m.balanceText).toBe(m.ledgerText);
    }
    const dead = await queryDatabase<{ n: string }>(databaseUrl, 'select count(*) as n from dead_letters');
    expect(Number(dead[0]?.n)).toBe(0);
  });

  test('an answer that cannot be stored fails the call, charged for the upstream’s work, streamed or not', async () => {
    const { gw, databaseUrl } = await postgresGateway('llmstorefail');
    const { userId, key } = await createAccount(gw, uniqueEmail('storefail'), 1);
    // Postgres refuses every stored Responses conversation from now on: the call's record still lands.
    await queryDatabase(
      databaseUrl,
      `create function refuse_stored_response() returns trigger language plpgsql
       as $$ begin raise exception 'test: llm_responses refuses writes'; end $$`,
    );
    await queryDatabase(
      databaseUrl,
      'create trigger refuse_stored_response before insert on llm_responses for each row execute function refuse_stored_response()',
    );
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const unstored = await openai.responses.create({ model: 'sandbox/echo', input: 'not stored', store: false });
    expect(unstored.status).toBe('completed');
    const err = await openai.responses.create({ model: 'sandbox/echo', input: 'a stored answer' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    const types: string[] = [];
    const streamed = await openai.responses.create({ model: 'sandbox/echo', input: 'a stored stream', stream: true });
    await (async () => {
      for await (const event of streamed) types.push(event.type);
    })().catch(() => types.push('(thrown)'));
    expect(types).not.toContain('response.completed');
    expect(types.some((t) => t === 'error' || t === '(thrown)')).toBe(true);
    const rows = await queryDatabase<{ status: string; cost_usd: string }>(
      databaseUrl,
      "select status, cost_usd from tasks where account_id = $1 and category = 'llm' order by created_at",
      [userId],
    );
    expect(rows.map((r) => r.status)).toEqual(['completed', 'failed', 'failed']);
    for (const row of rows) expect(Number(row.cost_usd)).toBeGreaterThan(0);
    const m = await ledgerAndBalance(databaseUrl, userId);
    expect(m.balanceText).toBe(m.ledgerText);
    expect(m.balance).toBeLessThan(1);
  });

  test('an upstream reporting usage no ledger could hold: the call is charged what the account can spend, the rest of the gateway settles on', async () => {
    // 5e28 input tokens at $1/M: a $5e22 charge, beyond numeric(24,10) and toFixed's plain notation.
    const upstream = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (req) => {
        const body = (await req.json()) as { model: string };
        return Response.json({
          id: 'chatcmpl-absurd',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage:
            body.model === 'usage'
              ? { prompt_tokens: 5e28, completion_tokens: 1, total_tokens: 5e28 }
              : { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        });
      },
    });
    try {
      const config = await openaiUpstreamConfig('odd', upstream.port, [
        { id: 'odd/usage', upstream: 'usage', pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
        { id: 'odd/normal', upstream: 'normal', pricing: { input_per_mtok: 1, output_per_mtok: 1 } },
      ]);
      const { gw, databaseUrl } = await postgresGateway('llmabsurdusage', { GATEWAY_CONFIG: config });
      const odd = await createAccount(gw, uniqueEmail('absurd'), 1);
      const other = await createAccount(gw, uniqueEmail('absurd-other'), 1);
      const answer = await api(gw, 'POST', '/v1/chat/completions', {
        key: odd.key,
        body: { model: 'odd/usage', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      });
      expect(answer.status).toBe(200);
      // Every other call keeps being answered and billed, the odd account's own included (what its
      // instance's lease still held, $0.00003, covers one more small call).
      for (const acct of [other, odd]) {
        const after = await api(gw, 'POST', '/v1/chat/completions', {
          key: acct.key,
          body: { model: 'odd/normal', messages: [{ role: 'user', content: 'after' }], max_tokens: 5 },
        });
        expect(after.status).toBe(200);
      }
      const m = await ledgerAndBalance(databaseUrl, odd.userId);
      expect(m.balanceText).toBe(m.ledgerText);
      expect(m.balance).toBeLessThan(0.0001);
      const [record] = await queryDatabase<{ cost_usd: string }>(
        databaseUrl,
        "select cost_usd from tasks where account_id = $1 and model = 'odd/usage'",
        [odd.userId],
      );
      expect(Number(record?.cost_usd)).toBeGreaterThan(0.9999);
      const o = await ledgerAndBalance(databaseUrl, other.userId);
      expect(o.balance).toBeLessThan(1);
      expect(o.balanceText).toBe(o.ledgerText);
    } finally {
      upstream.stop(true);
    }
  });

  test('a balance hold the database fails to grant gives the key’s budget hold back at once', async () => {
    const { gw, databaseUrl } = await postgresGateway('llmkeyholdback');
    const acct = await createAccount(gw, uniqueEmail('keyholdback'), 1);
    const made = await api(gw, 'POST', '/v1/keys', { key: acct.key, body: { name: 'budgeted', budget_usd: 0.005 } });
    const key = made.body.data.key as string;
    const call = (maxTokens: number) =>
      api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens },
      });
    // The balance's lease cannot grow while its table is away: the call fails after its key hold ($0.003).
    await queryDatabase(databaseUrl, 'alter table llm_reservations rename to llm_reservations_away');
    try {
      expect((await call(1500)).status).toBe(500);
    } finally {
      await queryDatabase(databaseUrl, 'alter table llm_reservations_away rename to llm_reservations');
    }
    // The key's $0.005 is whole again: a $0.004 call fits (its hold stayed for 2 h, and this was a 402).
    const after = await call(2000);
    expect(after.status).toBe(200);
    const [row] = await queryDatabase<{ reserved_usd: string }>(
      databaseUrl,
      'select reserved_usd from api_keys where id = $1',
      [made.body.data.id],
    );
    expect(Number(row?.reserved_usd)).toBeLessThanOrEqual(0.005);
  });

  test('a client that leaves before the first byte is charged the input the upstream read, streamed or not', async () => {
    let aborted = 0;
    const upstream = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      idleTimeout: 0,
      fetch: async (req) => {
        // Reads the prompt, then thinks for 3 s; the client gives up after 300 ms.
        await req.json();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 3_000);
          req.signal.addEventListener('abort', () => {
            aborted++;
            clearTimeout(timer);
            resolve();
          });
        });
        return Response.json({ error: { message: 'too late' } }, { status: 500 });
      },
    });
    try {
      const config = await openaiUpstreamConfig('slow', upstream.port, [
        { id: 'slow/m', upstream: 'm', pricing: { input_per_mtok: 1, output_per_mtok: 2 } },
      ]);
      const { gw, databaseUrl } = await postgresGateway('llmclientgone', { GATEWAY_CONFIG: config });
      const { userId, key } = await createAccount(gw, uniqueEmail('gone'), 1);
      const prompt = 'a prompt the upstream has read. '.repeat(400);
      for (const stream of [false, true]) {
        const gone = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'slow/m',
            messages: [{ role: 'user', content: prompt }],
            stream,
            max_tokens: 5,
          }),
          signal: AbortSignal.timeout(300),
        }).catch((e: unknown) => e);
        expect(gone).toBeInstanceOf(Error);
      }
      const rows = await (async () => {
        for (let i = 0; i < 50; i++) {
          const found = await queryDatabase<{ status: string; cost_usd: string; output: { finish_reason: string } }>(
            databaseUrl,
            "select status, cost_usd, output from tasks where account_id = $1 and category = 'llm'",
            [userId],
          );
          if (found.length === 2) return found;
          await Bun.sleep(100);
        }
        return [];
      })();
      expect(aborted).toBe(2);
      // Each was recorded failed at $0 before: the upstream's reading free to whoever hangs up.
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row.status).toBe('completed');
        expect(row.output.finish_reason).toBe('client_disconnected');
        // About 3,200 input tokens (four characters a token) at $1/M.
        expect(Number(row.cost_usd)).toBeCloseTo(prompt.length / 4 / 1_000_000, 5);
      }
      const m = await ledgerAndBalance(databaseUrl, userId);
      expect(m.balanceText).toBe(m.ledgerText);
      expect(m.balance).toBeLessThan(1);
    } finally {
      upstream.stop(true);
    }
  });

  test('kill -9 under load: every call the client received in full has its record and charge after restart', async () => {
    const { gw, databaseUrl, env } = await postgresGateway('llmkill9');
    const { userId, key } = await createAccount(gw, uniqueEmail('kill9'), 100);
    const answered = await callsUntilKilled(gw, key, { workers: 32, forMs: 1_500 });
    expect(answered.length).toBeGreaterThan(200);

    const restarted = await startGateway(env);
    running.push(restarted);
    const rows = await queryDatabase<{ rid: string; cost: string; charged: string }>(
      databaseUrl,
      `select t.output->>'id' as rid, t.cost_usd as cost, coalesce(sum(-l.amount_usd), 0) as charged
       from tasks t left join ledger_entries l on l.task_id = t.id where t.account_id = $1 and t.category = 'llm' group by t.id`,
      [userId],
    );
    const billed = new Map(rows.map((r) => [r.rid, r]));
    const missing = answered.filter((id) => !billed.has(id));
    expect(missing).toEqual([]);
    for (const id of answered) {
      const row = billed.get(id);
      expect(Number(row?.cost)).toBeGreaterThan(0);
      expect(row?.charged).toBe(row?.cost);
    }
    const m = await ledgerAndBalance(databaseUrl, userId);
    expect(m.balanceText).toBe(m.ledgerText);
    const account = await api(restarted, 'GET', '/v1/account', { key });
    expect(account.status).toBe(200);
  }, 120_000);

  test('the last byte waits for the charge: with the usage write held up, no call completes; after kill -9 the money is whole', async () => {
    const { gw, databaseUrl, env } = await postgresGateway('llmlastbyte');
    // Two accounts: a held-up charge keeps its account locked, which would also hold the other call's admission.
    const { userId, key } = await createAccount(gw, uniqueEmail('lastbyte'), 1);
    const second = await createAccount(gw, uniqueEmail('lastbyte'), 1);
    // Usage writes insert into tasks; a SHARE lock holds them (the holds taken at admission do not).
    const blocker = new pg.Client({ connectionString: databaseUrl });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('lock table tasks in share mode');
    const body = (stream: boolean) =>
      JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'held up words' }], stream });
    const post = (stream: boolean) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stream ? second.key : key}`, 'content-type': 'application/json' },
        body: body(stream),
      });
    let jsonDone = false;
    const json = post(false).then(async (res) => {
      await res.text();
      jsonDone = true;
    });
    const seen: string[] = [];
    const streamed = post(true).then(async (res) => {
      expect(res.status).toBe(200);
      const decoder = new TextDecoder();
      for await (const chunk of res.body as ReadableStream<Uint8Array>) seen.push(decoder.decode(chunk));
    });
    // The kill resets both connections: their rejections are expected.
    json.catch(() => undefined);
    streamed.catch(() => undefined);
    await Bun.sleep(800);
    // The text was produced (the stream relayed its deltas), but neither call has ended.
    expect(jsonDone).toBe(false);
    expect(seen.join('')).toContain('held');
    expect(seen.join('')).not.toContain('[DONE]');
    expect(seen.join('')).not.toContain('finish_reason":"stop');
    gw.proc.kill('SIGKILL');
    await gw.proc.exited;
    await Promise.allSettled([json, streamed]);
    await blocker.query('rollback');
    await blocker.end();
    expect(jsonDone).toBe(false);
    // Nothing was answered. A settlement already sent to Postgres may still commit after the kill
    // (the call did run upstream): if so, whole — its task row and its ledger charge together.
    const restarted = await startGateway(env);
    running.push(restarted);
    for (const id of [userId, second.userId]) {
      const m = await ledgerAndBalance(databaseUrl, id);
      expect(m.balanceText).toBe(m.ledgerText);
      const [row] = await queryDatabase<{ tasks: string; charges: string }>(
        databaseUrl,
        "select (select count(*) from tasks where account_id = $1 and category = 'llm') as tasks, (select count(*) from ledger_entries where account_id = $1 and kind = 'charge') as charges",
        [id],
      );
      expect(row?.tasks).toBe(row?.charges);
    }
  });
});
