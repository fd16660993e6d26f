/**
 * What reading a paced upstream stream costs the reading process, through Bun's `fetch` (what
 * the gateway's upstream calls use) against a bare keep-alive HTTP/1.1 reader on `Bun.connect`
 * (no TLS, chunked bodies only: a measuring device, not a client for the gateway). Bun's `fetch`
 * runs its HTTP on a thread of its own and hands each chunk to the JavaScript thread; a socket
 * opened with `Bun.connect` delivers its data on the JavaScript thread directly. The difference
 * is what an upstream client of the gateway's own could save per upstream event. The gateway's
 * own client (providers/common/http1, `UPSTREAM_HTTP_CLIENT=socket`) is read the same way, as a
 * `Response` body, to show how much of that saving it keeps; with `--libraries`, undici's `Pool`
 * and `node:http` with a keep-alive agent too, the library alternatives.
 *
 *   bun run bench/fetch-vs-socket.ts [--streams 800] [--events 20] [--concurrency 8] [--rounds 2] [--libraries]
 *
 * The upstream, a child process pinned to core 0, streams `--events` SSE events and `[DONE]`,
 * each its own write 1 ms after the last (as an LLM sends tokens). This process, pinned to core 1
 * when `taskset` is there, reads `--streams` streams `--concurrency` at a time each way, after a
 * warm-up of as many; rounds alternate the two. Then 200 lone streams each way, alternated, for
 * the time from the request to the first event. Prints a Markdown table.
 */
import http from 'node:http';
import type { Socket } from 'bun';
import { numberArg } from './lib/cli-args.ts';
import { http1Fetch } from '../providers/common/http1/http1-fetch.ts';

const STREAMS = numberArg('--streams', 800);
const EVENTS = numberArg('--events', 20);
const CONCURRENCY = numberArg('--concurrency', 8);
const ROUNDS = numberArg('--rounds', 2);
const LIBRARIES = process.argv.includes('--libraries');
type Way = 'fetch' | 'socket' | 'http1' | 'undici' | 'node-http';
const WAYS: Way[] = ['fetch', 'socket', 'http1', ...(LIBRARIES ? (['undici', 'node-http'] as const) : [])];
const LABELS: Record<Way, string> = {
  fetch: '`fetch` + body reader',
  socket: 'bare HTTP/1.1 on `Bun.connect`',
  http1: "the gateway's own client (`http1Fetch`) + body reader",
  undici: "undici's `Pool` (`request`, body iterated)",
  'node-http': '`node:http`, keep-alive agent',
};

// No idle timeout: the bare socket's connections wait unused while the other readers run.
const upstreamSource = `
const enc = new TextEncoder();
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 0, fetch() {
  let i = 0;
  return new Response(new ReadableStream({ async pull(c) {
    if (i > 0) await Bun.sleep(1);
    if (i < ${EVENTS}) c.enqueue(enc.encode('data: {"choices":[{"index":0,"delta":{"content":" token' + i + '"}}]}\\n\\n'));
    else if (i === ${EVENTS}) c.enqueue(enc.encode('data: [DONE]\\n\\n'));
    else return c.close();
    i++;
  } }), { headers: { 'content-type': 'text/event-stream' } });
} });
console.log(server.port);
`;

const upstream = Bun.spawn([process.execPath, '-e', upstreamSource], { stdout: 'pipe', stderr: 'inherit' });
const firstLine = await upstream.stdout.getReader().read();
const port = Number(new TextDecoder().decode(firstLine.value).trim());
const pinned = (pid: number, core: number) =>
  Bun.spawnSync(['taskset', '-pc', String(core), String(pid)], { stdout: 'ignore', stderr: 'ignore' }).exitCode === 0;
const isPinned = pinned(upstream.pid, 0) && pinned(process.pid, 1);

/** Milliseconds from each lone request to its first body byte, by reader (the latency phase). */
const firstByteMs: Record<Way, number[]> = { fetch: [], socket: [], http1: [], undici: [], 'node-http': [] };
let timing = false;

/** One stream through `fetch` or the gateway's own client; returns the body bytes. */
async function readResponse(way: 'fetch' | 'http1'): Promise<number> {
  const started = performance.now();
  const url = `http://127.0.0.1:${port}/`;
  const response =
    way === 'fetch'
      ? await fetch(url, { method: 'POST', body: '{}' })
      : await http1Fetch(url, { method: 'POST', headers: {}, body: '{}' });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    if (timing && bytes === 0) firstByteMs[way].push(performance.now() - started);
    bytes += value.byteLength;
  }
}

/** undici, from its own files: a bare `undici` import is Bun's built-in stand-in, which is `fetch`. */
const undici = LIBRARIES ? await import('../node_modules/undici/index.js') : undefined;
const pool = undici ? new undici.Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY }) : undefined;

async function readWithUndici(): Promise<number> {
  const started = performance.now();
  const { body } = await (pool as NonNullable<typeof pool>).request({ path: '/', method: 'POST', body: '{}' });
  let bytes = 0;
  for await (const chunk of body) {
    if (timing && bytes === 0) firstByteMs.undici.push(performance.now() - started);
    bytes += (chunk as Buffer).byteLength;
  }
  return bytes;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function readWithNodeHttp(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/', method: 'POST', agent }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        if (timing && bytes === 0) firstByteMs['node-http'].push(performance.now() - started);
        bytes += chunk.byteLength;
      });
      response.on('end', () => resolve(bytes));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end('{}');
  });
}

/** A keep-alive connection whose bytes arrive on this thread; `more` resolves at the next data. */
interface Connection {
  socket: Socket<undefined>;
  pending: Buffer;
  wake?: () => void;
}

async function connect(): Promise<Connection> {
  const connection = { pending: Buffer.alloc(0) } as Connection;
  connection.socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_socket, chunk) {
        connection.pending = connection.pending.length
          ? Buffer.concat([connection.pending, chunk])
          : Buffer.from(chunk);
        connection.wake?.();
      },
      close() {
        connection.wake?.();
      },
      error() {},
    },
  });
  return connection;
}

const more = (connection: Connection) => new Promise<void>((resolve) => (connection.wake = resolve));

/** One stream on a kept-alive socket: the head, then chunks until the zero-length one. */
async function readWithSocket(connection: Connection): Promise<number> {
  const started = performance.now();
  connection.socket.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}');
  let headEnd = connection.pending.indexOf('\r\n\r\n');
  while (headEnd < 0) {
    await more(connection);
    headEnd = connection.pending.indexOf('\r\n\r\n');
  }
  connection.pending = connection.pending.subarray(headEnd + 4);
  let bytes = 0;
  for (;;) {
    const lineEnd = connection.pending.indexOf('\r\n');
    const size = lineEnd < 0 ? -1 : Number.parseInt(connection.pending.subarray(0, lineEnd).toString('latin1'), 16);
    if (size < 0 || connection.pending.length < lineEnd + 2 + size + 2) {
      await more(connection);
      continue;
    }
    connection.pending = connection.pending.subarray(lineEnd + 2 + size + 2);
    if (size === 0) return bytes;
    if (timing && bytes === 0) firstByteMs.socket.push(performance.now() - started);
    bytes += size;
  }
}

const connections = await Promise.all(Array.from({ length: CONCURRENCY }, connect));

const readers: Record<Way, (lane: number) => Promise<number>> = {
  fetch: () => readResponse('fetch'),
  socket: (lane) => readWithSocket(connections[lane] as Connection),
  http1: () => readResponse('http1'),
  undici: readWithUndici,
  'node-http': readWithNodeHttp,
};

async function run(way: Way): Promise<number> {
  const lane = async (k: number) => {
    for (let i = k; i < STREAMS; i += CONCURRENCY) await readers[way](k);
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => lane(k)));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / STREAMS;
}

const results = Object.fromEntries(WAYS.map((way) => [way, [] as number[]])) as Record<Way, number[]>;
for (const way of WAYS) await run(way);
for (let round = 0; round < ROUNDS; round++)
  for (const way of WAYS) {
    const us = await run(way);
    results[way].push(us);
    process.stderr.write(`round ${round + 1} ${way}: ${us.toFixed(0)} µs CPU per stream\n`);
  }
// Latency: lone streams, one at a time, each way in turn, 20 ms apart (each way's time to its first event).
timing = true;
for (let i = 0; i < 200; i++)
  for (const way of WAYS) {
    await readers[way](0);
    await Bun.sleep(20);
  }
upstream.kill();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `\n### Reading a paced stream (${EVENTS} events and [DONE], 1 ms apart), ${STREAMS} streams ${CONCURRENCY} at a time; pinned: ${isPinned}; Bun ${Bun.version}\n`,
);
console.log('| reader | CPU µs per stream (each round) | median | per event | lone stream: first event p50 ms |');
console.log('| --- | --- | --- | --- | --- |');
for (const way of WAYS)
  console.log(
    `| ${LABELS[way]} | ${results[way].map((x) => x.toFixed(0)).join(' / ')} | ${median(results[way]).toFixed(0)} | ${(median(results[way]) / (EVENTS + 1)).toFixed(1)} | ${median(firstByteMs[way]).toFixed(3)} |`,
  );
process.exit(0);
