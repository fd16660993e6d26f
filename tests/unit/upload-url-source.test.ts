import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Server } from 'bun';
import { openUrlSource } from '../../src/uploads/url-source.ts';
import { rejection } from '../helpers/rejection.ts';

/** Stands for "some public address": requests to it are rerouted to our loopback server. */
const PUBLIC_IP = '93.184.216.34';
const resolve = async (host: string) =>
  host === 'files.example.com' ? [PUBLIC_IP] : host === 'intranet.example.com' ? ['10.0.0.7'] : [];

let server: Server<undefined>;
const hits: string[] = [];

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url);
      hits.push(url.pathname);
      if (url.pathname === '/file') return new Response(new Uint8Array(1000).fill(7));
      if (url.pathname === '/missing') return new Response('nope', { status: 404 });
      if (url.pathname.startsWith('/to/'))
        return new Response(null, { status: 302, headers: { location: decodeURIComponent(url.pathname.slice(4)) } });
      return new Response('?', { status: 500 });
    },
  });
});
afterAll(() => server.stop(true));

/** Sends what was aimed at PUBLIC_IP to the loopback server; anything else is a test failure. */
const reroute = async (url: string, init: BunFetchRequestInit) => {
  const u = new URL(url);
  if (u.hostname !== PUBLIC_IP) throw new Error(`the test tried to reach ${u.hostname}`);
  u.hostname = '127.0.0.1';
  u.port = String(server.port);
  return fetch(u.href, init);
};

const open = (url: string, maxBytes = 10_000) =>
  openUrlSource(url, { allowPrivate: false, maxBytes, timeoutMs: 5000, resolve, fetch: reroute });

describe('file_url downloads', () => {
  test('a public URL streams its body', async () => {
    const body = await open('http://files.example.com/file');
    expect(new Uint8Array(await new Response(body).arrayBuffer())).toEqual(new Uint8Array(1000).fill(7));
  });

  test('a redirect to a private address is refused before it is followed', async () => {
    hits.length = 0;
    for (const target of [
      'http://127.0.0.1/secret',
      'http://intranet.example.com/secret',
      'http://[::ffff:169.254.169.254]/latest',
    ]) {
      const err = await rejection(open(`http://files.example.com/to/${encodeURIComponent(target)}`));
      expect(err).toMatchObject({
        status: 422,
        message: expect.stringMatching(/^file_url: (points|resolves) to an? (loopback|private|link-local) address/),
      });
    }
    expect(hits.length).toBe(3);
    expect(hits.every((p) => p.startsWith('/to/'))).toBe(true);
  });

  test('private addresses, non-2xx answers and oversized bodies', async () => {
    expect(await rejection(open('http://127.0.0.1:1/x'))).toMatchObject({
      status: 422,
      message: 'file_url: points to a private address (127.0.0.1 is loopback)',
    });
    expect(await rejection(open('http://files.example.com/missing'))).toMatchObject({
      status: 422,
      message: 'file_url: the server answered 404 Not Found, not the file',
    });
    expect(await rejection(open('http://files.example.com/file', 999))).toMatchObject({ status: 413 });
  });
});
