import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Server } from 'bun';
import type { Resolver } from '../../src/net/address-guard.ts';
import { FetchLimitError, UnsafeUrlError } from '../../src/net/net-errors.ts';
import { safeFetch } from '../../src/net/safe-fetch.ts';
import { PINNED_TEST_CERT, PINNED_TEST_KEY } from './safe-fetch.tls-cert.ts';

/** Stands for "some public address": requests to it are rerouted to loopback, never sent out. */
const PUBLIC_IP = '93.184.216.34';

let server: Server<undefined>;
let tlsServer: Server<undefined>;
let base: string;
const hits: string[] = [];
const seen: Array<{ path: string; host: string | null; method: string; body: string }> = [];

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      hits.push(url.pathname);
      seen.push({ path: url.pathname, host: req.headers.get('host'), method: req.method, body: await req.text() });
      const p = url.pathname;
      if (p === '/ok') return new Response('hello', { headers: { 'content-type': 'text/plain' } });
      if (p === '/secret') return new Response('secret');
      if (p.startsWith('/to/'))
        return new Response(null, {
          status: Number(url.searchParams.get('s') ?? 302),
          headers: { location: decodeURIComponent(p.slice(4)) },
        });
      if (p === '/loop') return Response.redirect(`${base}/loop`, 302);
      if (p === '/big') return new Response(new Uint8Array(5000));
      if (p === '/chunked-big') {
        return new Response(
          new ReadableStream({
            async pull(c) {
              c.enqueue(new Uint8Array(1000));
              await Bun.sleep(1);
            },
          }),
        );
      }
      if (p === '/slow-headers') return Bun.sleep(2000).then(() => new Response('late'));
      if (p === '/slow-body') {
        return new Response(
          new ReadableStream({
            async start(c) {
              c.enqueue(new TextEncoder().encode('first'));
              await Bun.sleep(2000);
              c.close();
            },
          }),
        );
      }
      if (p === '/empty') return new Response(null, { status: 204 });
      return new Response('not found', { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  tlsServer = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { key: PINNED_TEST_KEY, cert: PINNED_TEST_CERT },
    fetch: (req) => new Response(`tls host=${req.headers.get('host')}`),
  });
});
afterAll(() => {
  server.stop(true);
  tlsServer.stop(true);
});

const open = { allowPrivate: true, timeoutMs: 5000 };

/**
 * A fetch that sends what safeFetch aimed at PUBLIC_IP to our loopback server instead, recording
 * the URL and Host it was given (proof of pinning). Anything else is refused: no test reaches
 * the real internet.
 */
function rerouting(
  log: Array<{ url: string; host: string | null; serverName?: string }>,
  extraTls: Record<string, unknown> = {},
) {
  return async (url: string, init: BunFetchRequestInit) => {
    const u = new URL(url);
    log.push({ url, host: new Headers(init.headers).get('host'), serverName: init.tls?.serverName });
    if (u.hostname !== PUBLIC_IP) throw new Error(`test fetch refused ${url}`);
    u.hostname = '127.0.0.1';
    return fetch(u.href, { ...init, tls: { ...init.tls, ...extraTls } });
  };
}
const resolver =
  (answers: Record<string, string[]>): Resolver =>
  async (host) =>
    answers[host] ?? [];

describe('safeFetch', () => {
  test('allowPrivate false refuses loopback before sending anything', async () => {
    const before = hits.length;
    await expect(safeFetch(`${base}/ok`, {}, { allowPrivate: false })).rejects.toBeInstanceOf(UnsafeUrlError);
    await expect(
      safeFetch(`http://localhost:${server.port}/ok`, {}, { allowPrivate: false, field: 'file_url' }),
    ).rejects.toThrow(/^file_url: resolves to a private address$/);
    expect(hits.length).toBe(before);
  });

  test('allowPrivate true fetches loopback', async () => {
    const res = await safeFetch(`${base}/ok`, {}, open);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    expect(res.finalUrl).toBe(`${base}/ok`);
    const none = await safeFetch(`${base}/empty`, {}, open);
    expect(none.status).toBe(204);
    expect(none.body).toBeNull();
  });

  test('the connection is pinned to the checked address; Host keeps the name', async () => {
    const log: Array<{ url: string; host: string | null; serverName?: string }> = [];
    const res = await safeFetch(
      `http://hooks.test:${server.port}/ok`,
      {},
      {
        allowPrivate: false,
        resolve: resolver({ 'hooks.test': [PUBLIC_IP] }),
        fetch: rerouting(log),
      },
    );
    expect(await res.text()).toBe('hello');
    expect(log).toEqual([
      { url: `http://${PUBLIC_IP}:${server.port}/ok`, host: `hooks.test:${server.port}`, serverName: undefined },
    ]);
    expect(seen.at(-1)?.host).toBe(`hooks.test:${server.port}`);
  });

  test('https is pinned too: SNI and certificate checks use the name, not the IP', async () => {
    const log: Array<{ url: string; host: string | null; serverName?: string }> = [];
    const res = await safeFetch(
      `https://pinned.test:${tlsServer.port}/`,
      {},
      {
        allowPrivate: false,
        resolve: resolver({ 'pinned.test': [PUBLIC_IP] }),
        fetch: rerouting(log, { ca: PINNED_TEST_CERT }),
      },
    );
    expect(await res.text()).toBe(`tls host=pinned.test:${tlsServer.port}`);
    expect(log[0]).toMatchObject({ url: `https://${PUBLIC_IP}:${tlsServer.port}/`, serverName: 'pinned.test' });
    // The same server under another name fails verification: the name really is checked.
    await expect(
      safeFetch(
        `https://other.test:${tlsServer.port}/`,
        {},
        {
          allowPrivate: false,
          resolve: resolver({ 'other.test': [PUBLIC_IP] }),
          fetch: rerouting([], { ca: PINNED_TEST_CERT }),
        },
      ),
    ).rejects.toThrow();
  });

  test('a redirect into a private address is refused, and the target is never hit', async () => {
    const before = hits.filter((h) => h === '/secret').length;
    const target = encodeURIComponent(`http://127.0.0.1:${server.port}/secret`);
    const opts = {
      allowPrivate: false,
      field: 'file_url',
      resolve: resolver({ 'cdn.test': [PUBLIC_IP], 'internal.test': ['10.0.0.5'] }),
      fetch: rerouting([]),
    };
    await expect(safeFetch(`http://cdn.test:${server.port}/to/${target}`, {}, opts)).rejects.toThrow(
      'file_url: points to a private address (127.0.0.1 is loopback)',
    );
    const byName = encodeURIComponent('http://internal.test/secret');
    const err = await safeFetch(`http://cdn.test:${server.port}/to/${byName}`, {}, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeUrlError);
    expect((err as Error).message).toBe('file_url: resolves to a private address');
    expect(hits.filter((h) => h === '/secret').length).toBe(before);
  });

  test('redirects are followed up to the limit, with browser method rules', async () => {
    const res = await safeFetch(`${base}/to/${encodeURIComponent('/ok')}`, {}, open);
    expect(await res.text()).toBe('hello');
    expect(res.finalUrl).toBe(`${base}/ok`);

    await safeFetch(`${base}/to/${encodeURIComponent('/ok')}?s=303`, { method: 'POST', body: 'payload' }, open);
    expect(seen.at(-1)).toMatchObject({ path: '/ok', method: 'GET', body: '' });
    await safeFetch(`${base}/to/${encodeURIComponent('/ok')}?s=307`, { method: 'POST', body: 'payload' }, open);
    expect(seen.at(-1)).toMatchObject({ path: '/ok', method: 'POST', body: 'payload' });

    const err = await safeFetch(`${base}/loop`, {}, { ...open, maxRedirects: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchLimitError);
    expect((err as FetchLimitError).limit).toBe('redirects');
    expect((err as Error).message).toBe('url: more than 3 redirects');
  });

  test('followRedirects false hands the 3xx back unfollowed', async () => {
    const before = hits.length;
    const res = await safeFetch(
      `${base}/to/${encodeURIComponent('/ok')}`,
      { method: 'POST', body: '{}' },
      { ...open, followRedirects: false },
    );
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/ok');
    expect(hits.length).toBe(before + 1);
  });

  test('a Content-Length above maxBytes is refused before the body is read', async () => {
    const err = await safeFetch(`${base}/big`, {}, { ...open, maxBytes: 4096, field: 'file_url' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FetchLimitError);
    expect((err as FetchLimitError).limit).toBe('size');
    expect((err as FetchLimitError).status).toBe(413);
    expect((err as Error).message).toBe('file_url: body of 5000 bytes is larger than 4096 bytes');
    expect(await (await safeFetch(`${base}/big`, {}, { ...open, maxBytes: 5000 })).arrayBuffer()).toHaveProperty(
      'byteLength',
      5000,
    );
  });

  test('a body without length errors once more than maxBytes arrived', async () => {
    const res = await safeFetch(`${base}/chunked-big`, {}, { ...open, maxBytes: 10_000 });
    expect(res.status).toBe(200);
    const err = await res.arrayBuffer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchLimitError);
    expect((err as Error).message).toBe('url: body is larger than 10000 bytes');
  });

  test('the time limit covers waiting for headers and for the body', async () => {
    const started = Date.now();
    const err = await safeFetch(`${base}/slow-headers`, {}, { ...open, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchLimitError);
    expect((err as FetchLimitError).limit).toBe('timeout');
    expect((err as Error).message).toBe('url: no complete answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(1500);

    const res = await safeFetch(`${base}/slow-body`, {}, { ...open, timeoutMs: 300 });
    const bodyErr = await res.text().catch((e: unknown) => e);
    expect(bodyErr).toBeInstanceOf(FetchLimitError);
    expect((bodyErr as FetchLimitError).limit).toBe('timeout');
  });
});
