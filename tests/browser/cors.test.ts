import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { launchChromium } from './chromium.ts';

/**
 * A web page on another origin calls the API as the SDKs' browser mode does (src/http/cors.ts):
 * in Chromium, so the preflight, the allowed headers and what a script may read are the
 * browser's own verdicts, not a test's reading of headers. The dashboard's API stays closed to
 * other origins.
 */
const postgres = MODES.find((m) => m.name === 'postgres+redis') as (typeof MODES)[number];

describe('the API from a page on another origin, in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let gw: GatewayProcess;
  let key: string;
  let site: ReturnType<typeof Bun.serve>;

  beforeAll(async () => {
    browser = await launchChromium();
    gw = await startGateway({ ...(await postgres.env('cors')), RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key } = await createAccount(gw, uniqueEmail('cors'), 10));
    // Another origin: same host, another port.
    site = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () =>
        new Response('<!doctype html><title>app</title><p>app</p>', { headers: { 'content-type': 'text/html' } }),
    });
    page = await (await browser.newContext()).newPage();
    await page.goto(`http://127.0.0.1:${site.port}/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    site?.stop(true);
    await gw?.stop();
  });

  test('chat with a bearer key, streamed and not: the answer and the gateway’s headers are readable', async () => {
    const result = await page.evaluate(
      async ({ base, key }) => {
        const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-stainless-os': 'web' };
        const body = { model: 'sandbox/echo', messages: [{ role: 'user', content: 'from a page' }] };
        const json = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
        const streamed = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ ...body, stream: true }),
        });
        return {
          status: json.status,
          content: (await json.json()).choices[0].message.content as string,
          requestId: json.headers.get('x-request-id'),
          cost: json.headers.get('x-gateway-cost-usd'),
          streamStatus: streamed.status,
          streamText: await streamed.text(),
        };
      },
      { base: gw.url, key },
    );
    expect(result.status).toBe(200);
    expect(result.content).toBe('echo: from a page');
    expect(result.requestId).toStartWith('req_');
    expect(result.cost).not.toBeNull();
    expect(result.streamStatus).toBe(200);
    expect(result.streamText.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  test('Messages with x-api-key and the Anthropic browser header; a task, and its refusal, are readable too', async () => {
    const result = await page.evaluate(
      async ({ base, key }) => {
        const messages = await fetch(`${base}/v1/messages`, {
          method: 'POST',
          headers: {
            'x-api-key': key,
            'anthropic-version': '2023-06-01',
            'anthropic-dangerous-direct-browser-access': 'true',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ model: 'sandbox/echo', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
        });
        const refused = await fetch(`${base}/v1/tasks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sandbox/image', input: {} }),
        });
        return {
          messages: messages.status,
          type: (await messages.json()).type as string,
          refused: refused.status,
          envelope: (await refused.json()).success as boolean,
        };
      },
      { base: gw.url, key },
    );
    expect(result).toEqual({ messages: 200, type: 'message', refused: 422, envelope: false });
  });

  test('the dashboard’s API answers no other origin: the browser refuses the page its reply', async () => {
    const outcome = await page.evaluate(async (base) => {
      try {
        const res = await fetch(`${base}/dashboard/api/session`, { credentials: 'include' });
        return `read ${res.status}`;
      } catch (err) {
        return `refused: ${(err as Error).name}`;
      }
    }, gw.url);
    expect(outcome).toBe('refused: TypeError');
  });
});
