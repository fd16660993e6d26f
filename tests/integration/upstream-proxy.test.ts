import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createAccount, uniqueEmail } from '../helpers/api.ts';
import { FULL_TEXT, scenarioModel, startFakeLlmUpstream, type FakeLlmUpstream } from '../helpers/fake-llm-upstream.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * Upstream calls honour `HTTP_PROXY` (Bun's `fetch` reads it; docs/configuration.md), as a gateway
 * inside a network that reaches providers only through a proxy needs. The provider's `base_url`
 * names a host that does not resolve: a call can only succeed through the proxy, which forwards
 * what it is asked for to the fake upstream.
 */

let fake: FakeLlmUpstream;
let proxy: ReturnType<typeof Bun.serve>;
const proxied: string[] = [];
let configPath: string;

beforeAll(async () => {
  fake = await startFakeLlmUpstream('openai', { apiKey: 'sk-fake-proxied' });
  // A forward proxy for plain HTTP: requests arrive in absolute form (http://host:port/path).
  proxy = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const target = new URL(req.url);
      proxied.push(`${req.method} ${target.host}${target.pathname}`);
      const forwarded = await fetch(`http://127.0.0.1:${fake.port}${target.pathname}${target.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === 'GET' ? undefined : await req.arrayBuffer(),
      });
      return new Response(forwarded.body, { status: forwarded.status, headers: forwarded.headers });
    },
  });
  const config = {
    providers: [
      {
        id: 'behindproxy',
        kind: 'openai',
        base_url: `http://llm-upstream.invalid:${fake.port}/v1`,
        api_key: fake.apiKey,
        max_retries: 0,
      },
    ],
    models: [scenarioModel('behindproxy', 'text')],
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-proxy-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config));
});

afterAll(async () => {
  proxy?.stop(true);
  await fake?.stop();
});

for (const mode of MODES) {
  describe(`upstream calls through HTTP_PROXY [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let client: OpenAI;

    beforeAll(async () => {
      gw = await startGateway({
        ...(await mode.env('proxy')),
        GATEWAY_CONFIG: configPath,
        HTTP_PROXY: `http://127.0.0.1:${proxy.port}`,
        // The test's own services (Postgres, Redis) are not HTTP; the gateway's health checks of itself are local.
        NO_PROXY: 'localhost,127.0.0.1',
        LOG_LEVEL: 'warn',
      });
      const { key } = await createAccount(gw, uniqueEmail('proxy'), 5);
      client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('a chat call, streamed and not, reaches an upstream that only the proxy can reach', async () => {
      const before = proxied.length;
      const messages = [{ role: 'user' as const, content: 'via the proxy' }];
      const json = await client.chat.completions.create({ model: 'behindproxy/text', messages });
      expect(json.choices[0]?.message.content).toBe(FULL_TEXT);
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({
        model: 'behindproxy/text',
        messages,
        stream: true,
      }))
        streamed += chunk.choices[0]?.delta?.content ?? '';
      expect(streamed).toBe(FULL_TEXT);
      expect(proxied.slice(before)).toEqual([
        `POST llm-upstream.invalid:${fake.port}/v1/chat/completions`,
        `POST llm-upstream.invalid:${fake.port}/v1/chat/completions`,
      ]);
    });
  });
}
