/**
 * Time to the first streamed byte, sampled: streamed POSTs one after another on one keep-alive
 * raw socket (so no connect time is in the figure), one every `intervalMs`, each timed from the
 * moment its request is written to the moment the first byte of the first SSE event of the body
 * (`data:` or `event:` after the response head) arrives. Meant to run while h2load drives the
 * background load. Bounded by `samples` and `deadlineMs`; a non-200 answer ends the probe with an error.
 */
export interface FirstByteSamples {
  /** ms to the response head (status line and headers). */
  headMs: number[];
  /** ms to the first byte of the first event. */
  firstEventMs: number[];
}

export async function probeFirstByte(opts: {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  samples: number;
  intervalMs: number;
  deadlineMs: number;
}): Promise<FirstByteSamples> {
  const request = Buffer.from(
    `POST ${opts.path} HTTP/1.1\r\nHost: ${opts.host}:${opts.port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(opts.body)}\r\n` +
      Object.entries(opts.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `\r\n${opts.body}`,
  );
  const out: FirstByteSamples = { headMs: [], firstEventMs: [] };
  let text = '';
  let t0 = 0;
  let headAt = 0;
  let eventAt = 0;
  let bodyFrom = -1;
  let done: (error?: Error) => void = () => undefined;
  const socket = await Bun.connect({
    hostname: opts.host,
    port: opts.port,
    socket: {
      data(_s, chunk) {
        const now = performance.now();
        text += chunk.toString('latin1');
        if (bodyFrom < 0) {
          const end = text.indexOf('\r\n\r\n');
          if (end < 0) return;
          headAt = now;
          bodyFrom = end + 4;
          const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
          if (status !== '200') return done(new Error(`probe: status ${status}: ${text.slice(0, 400)}`));
        }
        if (!eventAt && /(^|\n)(data|event):/.test(text.slice(bodyFrom))) eventAt = now;
        // The chunked body's last chunk: the answer is complete and the connection free again.
        if (text.endsWith('\r\n0\r\n\r\n')) done();
      },
      close: () => done(new Error('probe: the connection closed')),
      error: (_s, err) => done(err),
    },
  });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      text = '';
      bodyFrom = -1;
      headAt = 0;
      eventAt = 0;
      const timer = setTimeout(() => done(new Error('probe: no complete answer within 10 s')), 10_000);
      done = (error) => {
        done = () => undefined;
        clearTimeout(timer);
        if (error) return reject(error);
        if (!eventAt) return reject(new Error(`probe: a stream without an event: ${text.slice(0, 400)}`));
        out.headMs.push(headAt - t0);
        out.firstEventMs.push(eventAt - t0);
        resolve();
      };
      t0 = performance.now();
      socket.write(request);
    });
  const deadline = Date.now() + opts.deadlineMs;
  try {
    let next = performance.now();
    for (let i = 0; i < opts.samples && Date.now() < deadline; i++) {
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      next += opts.intervalMs;
      await one();
    }
  } finally {
    socket.end();
  }
  return out;
}
