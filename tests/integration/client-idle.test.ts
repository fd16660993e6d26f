import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createAccount, uniqueEmail } from '../helpers/api.ts';
import { FULL_TEXT, scenarioModel, startFakeLlmUpstream, type FakeLlmUpstream } from '../helpers/fake-llm-upstream.ts';
import { LONG_PAUSE_MS } from '../helpers/fake-upstream-server.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * A client connection idle for `CLIENT_IDLE_TIMEOUT_S` is closed (Bun's `idleTimeout`), except
 * while an LLM call waits on its upstream (src/http/client-idle.ts): a stream whose upstream went
 * silent mid-way for longer than the limit (allowed up to `stream_idle_timeout_ms`, an hour) was
 * cut, and the client lost the rest of its answer. Here the limit is 1 s (Bun checks every 4 s)
 * and the upstream pauses LONG_PAUSE_MS after its third delta.
 */

const IDLE_S = 1;

let oai: FakeLlmUpstream;
let ant: FakeLlmUpstream;
let configPath: string;

beforeAll(async () => {
  oai = await startFakeLlmUpstream('openai', { apiKey: 'sk-fake-oai-idle' });
  ant = await startFakeLlmUpstream('anthropic', { apiKey: 'sk-ant-fake-idle' });
  const provider = (id: string, kind: string, fake: FakeLlmUpstream) => ({
    id,
    kind,
    base_url: fake.baseUrl,
    api_key: fake.apiKey,
    max_retries: 0,
    stream_idle_timeout_ms: LONG_PAUSE_MS * 3,
  });
  const config = {
    providers: [provider('fakeoai', 'openai', oai), provider('fakeant', 'anthropic', ant)],
    models: [scenarioModel('fakeoai', 'long-pause'), scenarioModel('fakeant', 'long-pause')],
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-client-idle-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config));
});

afterAll(async () => {
  await oai?.stop();
  await ant?.stop();
});

/** Opens a keep-alive connection, sends `request`, and reports when the answer ended and when the server closed. */
async function keptAlive(port: number, request: string, watchMs: number) {
  const started = performance.now();
  let text = '';
  let answeredAt: number | undefined;
  let closedAt: number | undefined;
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_s, chunk) {
        text += Buffer.from(chunk).toString();
        // A chunked body ends with its zero-length chunk.
        if (answeredAt === undefined && text.includes('\r\n0\r\n\r\n')) answeredAt = performance.now() - started;
      },
      close() {
        closedAt = performance.now() - started;
      },
      error() {},
    },
  });
  socket.write(request);
  const deadline = started + watchMs;
  while (closedAt === undefined && performance.now() < deadline) await Bun.sleep(50);
  socket.end();
  return { text, answeredAt, closedAt };
}

for (const mode of MODES) {
  describe(`client connections while an LLM call waits on its upstream [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;

    beforeAll(async () => {
      gw = await startGateway({
        ...(await mode.env('clientidle')),
        GATEWAY_CONFIG: configPath,
        CLIENT_IDLE_TIMEOUT_S: String(IDLE_S),
        LOG_LEVEL: 'warn',
      });
      ({ key } = await createAccount(gw, uniqueEmail('clientidle'), 5));
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('a stream whose upstream is silent mid-way for longer than the idle limit reaches its end, on both SDKs', async () => {
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
      const messages = [{ role: 'user' as const, content: 'Think hard.' }];
      const [chat, messagesText] = await Promise.all([
        (async () => {
          let text = '';
          for await (const chunk of await openai.chat.completions.create({
            model: 'fakeoai/long-pause',
            messages,
            stream: true,
          }))
            text += chunk.choices[0]?.delta?.content ?? '';
          return text;
        })(),
        (async () => {
          let text = '';
          for await (const event of await anthropic.messages.create({
            model: 'fakeant/long-pause',
            max_tokens: 100,
            messages,
            stream: true,
          }))
            if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
          return text;
        })(),
      ]);
      expect(chat).toBe(FULL_TEXT);
      expect(messagesText).toBe(FULL_TEXT);
    }, 30_000);

    test('once the answer is complete the limit is back: the idle keep-alive connection is closed', async () => {
      const port = Number(new URL(gw.url).port);
      const body = JSON.stringify({
        model: 'fakeoai/long-pause',
        messages: [{ role: 'user', content: 'Think, then go quiet.' }],
        stream: true,
      });
      const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const seen = await keptAlive(port, request, LONG_PAUSE_MS + 12_000);
      expect(seen.text).toContain('data: [DONE]');
      expect(seen.answeredAt).toBeGreaterThan(LONG_PAUSE_MS);
      // Closed by the server some seconds after the answer (Bun checks every 4 s), not left open.
      expect(seen.closedAt).toBeDefined();
      expect(seen.closedAt! - seen.answeredAt!).toBeLessThan(9_000);
    }, 30_000);
  });
}
