import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createAccount, uniqueEmail } from '../helpers/api.ts';
import { FULL_TEXT, scenarioModel, startFakeLlmUpstream, type FakeLlmUpstream } from '../helpers/fake-llm-upstream.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { selfSignedCert } from '../helpers/self-signed-cert.ts';

const HOST = 'llm-upstream.invalid';

/**
 * Upstream calls honour `HTTP_PROXY` and `HTTPS_PROXY` (Bun's `fetch` reads them;
 * docs/configuration.md), as a gateway inside a network that reaches providers only through a
 * proxy needs. The providers' `base_url`s name a host that does not resolve: a call can only
 * succeed through the proxy. Plain HTTP goes to it in absolute form and is forwarded; HTTPS is a
 * `CONNECT` tunnel to a TLS front of the fake upstream, whose throwaway certificate (for the
 * unresolvable name) the gateway is told to trust.
 */

let fake: FakeLlmUpstream;
let proxy: ReturnType<typeof Bun.serve>;
const proxied: string[] = [];
let tlsFront: ReturnType<typeof Bun.serve>;
let tunnel: Server;
const tunnelled: string[] = [];
let certFile: string;
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
  // HTTPS: the fake upstream behind TLS for HOST, reached by a CONNECT tunnel.
  const dir = await mkdtemp(join(tmpdir(), 'gw-proxy-'));
  const cert = await selfSignedCert(dir, [HOST]);
  certFile = cert.certFile;
  tlsFront = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: Bun.file(cert.certFile), key: Bun.file(cert.keyFile) },
    async fetch(req) {
      const url = new URL(req.url);
      const forwarded = await fetch(`http://127.0.0.1:${fake.port}${url.pathname}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === 'GET' ? undefined : await req.arrayBuffer(),
      });
      return new Response(forwarded.body, { status: forwarded.status, headers: forwarded.headers });
    },
  });
  tunnel = createServer((client) => {
    client.once('data', (head) => {
      const line = head.toString('latin1').split('\r\n')[0] ?? '';
      tunnelled.push(line);
      const upstream = connect(tlsFront.port as number, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
    });
    client.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => tunnel.listen(0, '127.0.0.1', resolve));

  const provider = (id: string, base: string) => ({
    id,
    kind: 'openai',
    base_url: base,
    api_key: fake.apiKey,
    max_retries: 0,
  });
  const config = {
    providers: [
      provider('behindproxy', `http://${HOST}:${fake.port}/v1`),
      provider('tlsproxy', `https://${HOST}:${tlsFront.port}/v1`),
    ],
    models: [scenarioModel('behindproxy', 'text'), scenarioModel('tlsproxy', 'text')],
  };
  configPath = join(dir, 'gateway.json');
  await writeFile(configPath, JSON.stringify(config));
});

afterAll(async () => {
  proxy?.stop(true);
  tlsFront?.stop(true);
  tunnel?.close();
  await fake?.stop();
});

for (const mode of MODES) {
  describe(`upstream calls through HTTP_PROXY and HTTPS_PROXY [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let client: OpenAI;

    beforeAll(async () => {
      gw = await startGateway({
        ...(await mode.env('proxy')),
        GATEWAY_CONFIG: configPath,
        HTTP_PROXY: `http://127.0.0.1:${proxy.port}`,
        HTTPS_PROXY: `http://127.0.0.1:${(tunnel.address() as { port: number }).port}`,
        NODE_EXTRA_CA_CERTS: certFile,
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
        `POST ${HOST}:${fake.port}/v1/chat/completions`,
        `POST ${HOST}:${fake.port}/v1/chat/completions`,
      ]);
    });

    test('over HTTPS the call goes through a CONNECT tunnel, the certificate checked for the upstream’s name', async () => {
      const before = tunnelled.length;
      const json = await client.chat.completions.create({
        model: 'tlsproxy/text',
        messages: [{ role: 'user', content: 'via the tunnel' }],
      });
      expect(json.choices[0]?.message.content).toBe(FULL_TEXT);
      expect(tunnelled.slice(before)[0]).toStartWith(`CONNECT ${HOST}:`);
    });
  });
}
