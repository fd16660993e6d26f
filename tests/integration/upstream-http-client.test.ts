import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { Socket } from 'bun';
import { http1Fetch } from '../../providers/common/http1/http1-fetch.ts';
import { idleConnectionCount } from '../../providers/common/http1/http1-pool.ts';
import { readUpstreamText } from '../../providers/common/upstream-body.ts';
import { HeadTimeout, upstreamTransport, useUpstreamClient } from '../../providers/common/upstream-transport.ts';
import { selfSignedCert } from '../helpers/self-signed-cert.ts';

/**
 * The gateway's own upstream HTTP/1.1 client against scripted servers on real sockets: each
 * server answers a whole request (head and `content-length` body) with what `answer` writes,
 * and counts the connections it was given.
 */
interface Conversation {
  buffer: string;
  /** Bytes the kernel has not taken yet, written as it drains. */
  unwritten?: Buffer;
}

/** Writes all of `bytes`, the rest as the socket drains. */
function writeAll(socket: Socket<Conversation>, bytes: Buffer) {
  const written = socket.write(bytes);
  socket.data.unwritten = written < bytes.length ? bytes.subarray(Math.max(0, written)) : undefined;
}

function scriptedServer(answer: (socket: Socket<Conversation>, request: string, n: number) => void) {
  let connections = 0;
  let requests = 0;
  const server = Bun.listen<Conversation>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        connections++;
        socket.data = { buffer: '' };
      },
      drain(socket) {
        if (socket.data.unwritten) writeAll(socket, socket.data.unwritten);
      },
      data(socket, chunk) {
        socket.data.buffer += chunk.toString('latin1');
        for (;;) {
          const end = socket.data.buffer.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(socket.data.buffer.slice(0, end))?.[1] ?? 0);
          if (socket.data.buffer.length < end + 4 + length) return;
          const request = socket.data.buffer.slice(0, end + 4 + length);
          socket.data.buffer = socket.data.buffer.slice(end + 4 + length);
          answer(socket, request, ++requests);
        }
      },
    },
  });
  const servers = [server];
  return {
    url: `http://127.0.0.1:${server.port}`,
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    stop: () => {
      for (const s of servers) s.stop(true);
    },
  };
}

const post = (url: string, body = '{"model":"m"}', signal?: AbortSignal) =>
  http1Fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal,
  });

const stops: (() => void)[] = [];
afterAll(() => {
  for (const stop of stops) stop();
});

describe('the upstream HTTP/1.1 client', () => {
  test('keeps one connection for sequential calls, content-length and chunked bodies alike', async () => {
    const server = scriptedServer((socket, _request, n) => {
      const body = JSON.stringify({ n });
      socket.write(
        n % 2
          ? `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`
          : `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
    });
    stops.push(server.stop);
    for (let i = 1; i <= 6; i++) expect(await (await post(server.url)).json()).toEqual({ n: i });
    expect(server.connections).toBe(1);
    expect(idleConnectionCount(server.url)).toBe(1);
  });

  test('a stream arrives piece by piece, before its end is written', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = scriptedServer(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n');
      socket.write('d\r\ndata: first\n\n\r\n');
      await held;
      socket.write('e\r\ndata: second\n\n\r\n0\r\n\r\n');
    });
    stops.push(server.stop);
    const response = await post(server.url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe('data: first\n\n');
    release();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe('data: second\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  test('a large body read slowly: paused, resumed, every byte in order, and the connection reused after', async () => {
    const server = scriptedServer((socket, _request, n) => {
      if (n > 1) return void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      const parts = [Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n')];
      for (let i = 0; i < 128; i++)
        parts.push(Buffer.from('10000\r\n'), Buffer.alloc(64 * 1024, i), Buffer.from('\r\n'));
      writeAll(socket, Buffer.concat([...parts, Buffer.from('0\r\n\r\n')]));
    });
    stops.push(server.stop);
    const response = await post(server.url);
    await Bun.sleep(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(128 * 64 * 1024);
    for (let i = 0; i < 128; i++) expect(bytes[i * 64 * 1024 + 1000]).toBe(i);
    expect(await (await post(server.url)).text()).toBe('ok');
    expect(server.connections).toBe(1);
  });

  test('a request body far larger than the socket takes at once is written whole, in order', async () => {
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        const bytes = Buffer.from(await req.arrayBuffer());
        return Response.json({ length: bytes.length, sum: bytes.reduce((a, b) => (a + b) % 65521, 0) });
      },
    });
    stops.push(() => server.stop(true));
    const body = 'é'.repeat(3 * 1024 * 1024);
    const expected = Buffer.from(body).reduce((a, b) => (a + b) % 65521, 0);
    const answer = await (await post(`http://127.0.0.1:${server.port}`, body)).json();
    expect(answer).toEqual({ length: 6 * 1024 * 1024, sum: expected });
  });

  test('an answer that comes before the request body was all written ends its connection', async () => {
    // The first connection answers 413 at the request's head and reads nothing more of it.
    let connections = 0;
    const server = Bun.listen<{ answered: boolean; first: boolean }>({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        open(socket) {
          socket.data = { answered: false, first: ++connections === 1 };
        },
        data(socket, chunk) {
          if (socket.data.answered || !chunk.includes('\r\n\r\n')) return;
          socket.data.answered = true;
          socket.write(
            socket.data.first
              ? 'HTTP/1.1 413 Content Too Large\r\ncontent-length: 0\r\n\r\n'
              : 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok',
          );
        },
      },
    });
    stops.push(() => server.stop(true));
    const url = `http://127.0.0.1:${server.port}`;
    expect((await post(url, 'x'.repeat(32 * 1024 * 1024))).status).toBe(413);
    expect(await (await post(url)).text()).toBe('ok');
    expect(connections).toBe(2);
  });

  test('gzip and brotli answers are decoded, and counted against bounds as decoded', async () => {
    const json = JSON.stringify({ text: 'x'.repeat(10_000) });
    const server = scriptedServer((socket, _request, n) => {
      const coded = n === 1 ? gzipSync(json) : brotliCompressSync(json);
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-encoding: ${n === 1 ? 'gzip' : 'br'}\r\ncontent-length: ${coded.length}\r\n\r\n`,
      );
      socket.write(coded);
    });
    stops.push(server.stop);
    const gz = await post(server.url);
    expect(gz.headers.get('content-encoding')).toBeNull();
    expect(await gz.text()).toBe(json);
    // 10 kB of JSON coded into a few dozen bytes: the bound sees the 10 kB.
    await expect(readUpstreamText(await post(server.url), 5_000)).rejects.toThrow(/larger than 5000 bytes/);
  });

  test('informational answers are skipped, a body read until close ends the connection', async () => {
    const server = scriptedServer((socket) => {
      socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n');
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"until":');
      setTimeout(() => socket.end('"close"}'), 20);
    });
    stops.push(server.stop);
    expect(await (await post(server.url)).json()).toEqual({ until: 'close' });
    expect(await (await post(server.url)).json()).toEqual({ until: 'close' });
    expect(server.connections).toBe(2);
  });

  test('a redirect, a broken head and a connection closed mid-body are errors, never an answer', async () => {
    const server = scriptedServer((socket, _request, n) => {
      if (n === 1)
        socket.write(
          'HTTP/1.1 307 Temporary Redirect\r\nlocation: http://169.254.169.254/\r\ncontent-length: 0\r\n\r\n',
        );
      else if (n === 2) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\nhello');
      else if (n === 3) socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
      else socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n');
    });
    stops.push(server.stop);
    await expect(post(server.url)).rejects.toThrow(/redirected \(307\).*not followed/);
    await expect(post(server.url)).rejects.toThrow(/bad content-length/);
    const cut = await post(server.url);
    await expect(cut.text()).rejects.toThrow(/closed the connection before the body ended/);
    await expect(post(server.url)).rejects.toThrow(/not an HTTP\/1.x status line/);
  });

  test('an abort before the answer rejects with its reason; one mid-body fails the body; neither connection is reused', async () => {
    const server = scriptedServer((socket, _request, n) => {
      if (n === 2) socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n');
      if (n === 3) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    stops.push(server.stop);
    const early = new AbortController();
    setTimeout(() => early.abort(new Error('client went away')), 30);
    await expect(post(server.url, '{}', early.signal)).rejects.toThrow('client went away');
    const late = new AbortController();
    const response = await post(server.url, '{}', late.signal);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).value?.byteLength).toBe(3);
    late.abort(new Error('client went away mid-body'));
    await expect(reader.read()).rejects.toThrow('client went away mid-body');
    expect(await (await post(server.url)).text()).toBe('ok');
    expect(server.connections).toBe(3);
  });

  test("no head within the head timeout is a HeadTimeout, with either client; the caller's abort stays its own", async () => {
    // Only `/quick` is answered; the others are left waiting.
    const server = scriptedServer((socket, request) => {
      if (request.startsWith('POST /quick ')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    stops.push(server.stop);
    const init = (signal: AbortSignal, headTimeoutMs: number) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal,
      headTimeoutMs,
    });
    const alive = new AbortController().signal;
    try {
      for (const client of ['socket', 'fetch'] as const) {
        useUpstreamClient(client);
        const started = performance.now();
        const silent = upstreamTransport(`${server.url}/silent`, init(alive, 150));
        await expect(silent).rejects.toBeInstanceOf(HeadTimeout);
        expect(performance.now() - started).toBeLessThan(1_000);
        // The caller's own abort is its reason, not a timeout.
        const gone = new AbortController();
        setTimeout(() => gone.abort(new Error('client went away')), 30);
        const aborted = upstreamTransport(`${server.url}/gone`, init(gone.signal, 5_000)).catch((e) => e);
        expect(await aborted).not.toBeInstanceOf(HeadTimeout);
        expect(String(await aborted)).toMatch(client === 'socket' ? /client went away/ : /abort|client went away/i);
      }
      // An answer within the time is the answer, and its timer does not outlive it.
      useUpstreamClient('socket');
      const quick = await upstreamTransport(`${server.url}/quick`, init(alive, 5_000));
      expect(await quick.text()).toBe('ok');
    } finally {
      useUpstreamClient('socket');
    }
  });

  test('a body whose last read filled the unread queue (its socket paused at the end) leaves the connection usable', async () => {
    const events = Array.from({ length: 16 }, (_, i) => `data: ${String(i).padStart(2, '0')}\n\n`);
    const server = scriptedServer(async (socket, _request, n) => {
      if (n > 1) return void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
      // Sixteen reads, the terminator in the last: the reader reads none of them until all are in.
      for (const [i, event] of events.entries()) {
        await Bun.sleep(5);
        socket.write(`a\r\n${event}\r\n${i === events.length - 1 ? '0\r\n\r\n' : ''}`);
      }
    });
    stops.push(server.stop);
    const response = await post(server.url);
    await Bun.sleep(300);
    expect(await response.text()).toBe(events.join(''));
    expect(await (await post(server.url)).text()).toBe('ok');
    expect(server.connections).toBe(1);
  });

  test('a connection the server closed while idle is not used again', async () => {
    const server = scriptedServer((socket) => {
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    stops.push(server.stop);
    for (let i = 0; i < 3; i++) {
      expect(await (await post(server.url)).text()).toBe('ok');
      await Bun.sleep(30);
    }
    expect(server.connections).toBe(3);
    expect(idleConnectionCount(server.url)).toBe(0);
  });

  test("an idle connection is let go a second before the server's Keep-Alive timeout", async () => {
    const told = scriptedServer((socket) =>
      socket.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=2\r\ncontent-length: 2\r\n\r\nok'),
    );
    const silent = scriptedServer((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
    stops.push(told.stop, silent.stop);
    await Promise.all([post(told.url).then((r) => r.text()), post(silent.url).then((r) => r.text())]);
    expect([idleConnectionCount(told.url), idleConnectionCount(silent.url)]).toEqual([1, 1]);
    await Bun.sleep(1_300);
    expect([idleConnectionCount(told.url), idleConnectionCount(silent.url)]).toEqual([0, 1]);
  });

  test('a header value with a line break is refused before anything is sent', async () => {
    const server = scriptedServer((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
    stops.push(server.stop);
    await expect(
      http1Fetch(`${server.url}/`, {
        method: 'POST',
        headers: { 'anthropic-beta': 'x\r\nGET /admin HTTP/1.1' },
        body: '{}',
      }),
    ).rejects.toThrow(TypeError);
    expect(server.connections).toBe(0);
  });
});

describe('over TLS', () => {
  test('verifies the upstream certificate against the trusted roots (NODE_EXTRA_CA_CERTS included), by host name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'http1-tls-'));
    const { certFile, keyFile } = await selfSignedCert(dir, ['localhost']);
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { cert: Bun.file(certFile), key: Bun.file(keyFile) },
      fetch: async (req) => Response.json({ host: req.headers.get('host'), body: await req.json() }),
    });
    stops.push(() => server.stop(true));
    const client = async (host: string, trusted: boolean) => {
      const source = `
        import { http1Fetch } from '${join(import.meta.dir, '../../providers/common/http1/http1-fetch.ts')}';
        const out = [];
        for (let i = 0; i < 2; i++) {
          try {
            const r = await http1Fetch('https://${host}:${server.port}/x', { method: 'POST', headers: {}, body: '{"i":' + i + '}' });
            out.push(await r.json());
          } catch (e) { out.push({ error: String(e.message) }); }
        }
        console.log(JSON.stringify(out));`;
      // Spawned, not spawnSync: this process serves the TLS side meanwhile.
      const run = Bun.spawn([process.execPath, '-e', source], {
        env: { ...process.env, ...(trusted ? { NODE_EXTRA_CA_CERTS: certFile } : { NODE_EXTRA_CA_CERTS: '' }) },
        stdout: 'pipe',
      });
      return JSON.parse((await new Response(run.stdout).text()).trim().split('\n').pop() as string);
    };
    expect(await client('127.0.0.1', true)).toEqual([
      { host: `127.0.0.1:${server.port}`, body: { i: 0 } },
      { host: `127.0.0.1:${server.port}`, body: { i: 1 } },
    ]);
    // By name: the name goes in SNI and the certificate is checked against it.
    expect((await client('localhost', true))[1]).toEqual({ host: `localhost:${server.port}`, body: { i: 1 } });
    expect((await client('127.0.0.1', false))[0].error).toMatch(/TLS with 127.0.0.1 failed: .*self.signed/i);
  });
});
