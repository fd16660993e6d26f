/** A streamed HTTP/1.1 POST over a raw socket, for many concurrent long streams from one process. */

/** Sockets still open, so a caller can close them all on exit. */
export const openSockets = new Set<{ end(): void }>();

export interface StreamResult {
  ok: boolean;
  ms: number;
  error?: string;
}

/**
 * One streamed POST over a raw socket (fetch in one process caps concurrent connections), read
 * until the chunked body ends; ok when the status is 200 and `data: [DONE]` arrived.
 */
export function rawStream(
  host: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  body: string,
  deadline: number,
): Promise<StreamResult> {
  const request =
    `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `Connection: close\r\n\r\n${body}`;
  const t0 = performance.now();
  return new Promise<StreamResult>((resolveResult) => {
    let head = '';
    let tail = '';
    let status = 0;
    let sawDone = false;
    let settled = false;
    let pending = Buffer.from(request);
    let sock: { end(): void } | undefined;
    const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()));
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (sock) {
        openSockets.delete(sock);
        sock.end();
      }
      const ok = !error && status === 200 && sawDone;
      resolveResult({
        ok,
        ms: performance.now() - t0,
        error: ok ? undefined : (error ?? (status !== 200 ? `status ${status}` : 'stream ended without [DONE]')),
      });
    };
    Bun.connect({
      hostname: host,
      port,
      socket: {
        open(s) {
          sock = s;
          openSockets.add(s);
          const n = s.write(pending);
          pending = pending.subarray(Math.max(0, n));
        },
        drain(s) {
          if (pending.length) pending = pending.subarray(Math.max(0, s.write(pending)));
        },
        data(_s, data) {
          const text = data.toString('latin1');
          if (!status) {
            head += text;
            const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
            if (m) status = Number(m[1]);
            else if (head.length > 64) return finish('bad status line');
          }
          const window = tail + text;
          if (window.includes('data: [DONE]')) sawDone = true;
          if (sawDone && /\r\n0\r\n\r\n$/.test(window)) return finish();
          tail = window.slice(-64);
        },
        close() {
          finish(sawDone ? undefined : 'closed early');
        },
        error(_s, err) {
          finish(`socket error: ${err.message}`);
        },
        connectError(_s, err) {
          finish(`connect error: ${err.message}`);
        },
      },
    }).catch((err: Error) => finish(`connect error: ${err.message}`));
  });
}
