import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * A Responses upstream that streams a failed response (`response.failed`, no `error` before it):
 * a Responses client gets it as sent, stored under the gateway's id as any answer is; a chat
 * client gets its format's error event, never a normal finish.
 */
const FIXTURE = `${import.meta.dir}/../fixtures/responses/failed.sse`;

for (const mode of MODES) {
  describe(`a failed Responses stream [${mode.name}]`, () => {
    let upstream: ReturnType<typeof Bun.serve>;
    let gw: GatewayProcess;
    let key: string;
    beforeAll(async () => {
      const sse = await Bun.file(FIXTURE).text();
      upstream = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }),
      });
      const dir = await mkdtemp(join(tmpdir(), 'gw-resp-failed-'));
      const config = join(dir, 'gateway.json');
      await writeFile(
        config,
        JSON.stringify({
          providers: [
            { id: 'rf', kind: 'openai-responses', base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: 'k' },
          ],
          models: [
            {
              id: 'rf/model',
              category: 'llm',
              upstream_model: 'gpt-4.1',
              display_name: 'rf',
              pricing: { input_per_mtok: 1, output_per_mtok: 1 },
            },
          ],
        }),
      );
      gw = await startGateway({ ...(await mode.env('respfailed')), GATEWAY_CONFIG: config });
      ({ key } = await createAccount(gw, uniqueEmail('respfailed'), 5));
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
      upstream?.stop(true);
    });

    const events = async (path: string, body: object) => {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, stream: true }),
      });
      expect(res.status).toBe(200);
      return (await res.text())
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)));
    };

    test('a Responses client gets response.failed as sent, and the response is stored', async () => {
      const got = await events('/v1/responses', { model: 'rf/model', input: 'hi' });
      const failed = got.find((e) => e.type === 'response.failed');
      expect(failed?.response.status).toBe('failed');
      expect(failed?.response.error).toEqual({ code: 'server_error', message: 'The model produced invalid content.' });
      const stored = await api(gw, 'GET', `/v1/responses/${failed.response.id}`, { key });
      expect(stored.status).toBe(200);
      expect(stored.body.status).toBe('failed');
    });

    test('a failed response is never served again from the cache', async () => {
      const ask = () =>
        fetch(`${gw.url}/v1/responses`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'x-gateway-cache': 'ttl=600',
          },
          body: JSON.stringify({ model: 'rf/model', input: 'cache me', stream: true }),
        });
      for (let i = 0; i < 2; i++) {
        const res = await ask();
        expect(res.headers.get('x-gateway-cache')).toBe('miss');
        await res.text();
        await Bun.sleep(100);
      }
    });

    test('a chat client gets the error, never a finish: failed before any byte, a 502 in its own shape', async () => {
      const res = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'rf/model', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(res.status).toBe(502);
      expect(res.body.error.message).toContain('The model produced invalid content.');
    });
  });
}
