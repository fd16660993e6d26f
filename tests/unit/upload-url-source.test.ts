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

  test("a source server that misbehaves is the client's 422 naming file_url, at the connection or mid-body", async () => {
    // Raw HTTP answers: a body cut below its Content-Length, and a gzip body that does not inflate.
    const raw = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket, data) {
          const cut = data.toString().includes('/cut');
          socket.write(
            cut
              ? 'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly ten b'
              : 'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 12\r\n\r\nnot gzipped!',
          );
          socket.end();
        },
      },
    });
    const to = (port: number) => async (url: string, init: BunFetchRequestInit) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return fetch(u.href, init);
    };
    const closed = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    const closedPort = closed.port;
    closed.stop(true);
    try {
      const read = async (path: string, port: number) => {
        const body = await openUrlSource(`http://files.example.com${path}`, {
          allowPrivate: false,
          maxBytes: 10_000,
          timeoutMs: 5000,
          resolve,
          fetch: to(port),
        });
        return new Response(body).arrayBuffer();
      };
      for (const [path, port] of [
        ['/refused', closedPort],
        ['/cut', raw.port],
        ['/gzip', raw.port],
      ] as const) {
        expect(await rejection(read(path, port))).toMatchObject({
          status: 422,
          message: expect.stringMatching(/^file_url: the download failed \(/),
        });
      }
    } finally {
      raw.stop(true);
    }
  });
});
