import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Server } from 'bun';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { ADMIN_TOKEN, MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
const enc = (s: string) => new TextEncoder().encode(s);
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex');
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

/** Random bytes behind a real signature, so the gateway's sniffing has something to find. */
const PNG = concat(
  new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  crypto.getRandomValues(new Uint8Array(3000)),
);
const WAV = concat(
  enc('RIFF'),
  new Uint8Array([0x24, 0x08, 0, 0]),
  enc('WAVEfmt '),
  crypto.getRandomValues(new Uint8Array(2000)),
);
const MP4 = concat(
  new Uint8Array([0, 0, 0, 0x18]),
  enc('ftypisom'),
  new Uint8Array([0, 0, 2, 0]),
  enc('isomiso2'),
  crypto.getRandomValues(new Uint8Array(2000)),
);
/** 3 MB of binary: CRLFs and dashes included, crossing many chunks. */
const BIG = (() => {
  const bytes = crypto.getRandomValues(new Uint8Array(3 * 1024 * 1024));
  for (let i = 0; i < bytes.length - 8; i += 4099) bytes.set(enc('\r\n--\r\n'), i);
  return bytes;
})();

/** A fixture origin on loopback: the gateways fetch `file_url`s from it. */
let origin: Server<undefined>;
let originUrl: string;

beforeAll(() => {
  origin = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === '/big.bin') return new Response(BIG);
      if (path === '/too-big.bin') return new Response(new Uint8Array(MAX_UPLOAD_BYTES + 1));
      if (path === '/redirect') return Response.redirect(`${originUrl}/big.bin`, 302);
      if (path === '/missing') return new Response('no', { status: 404 });
      return new Response('?', { status: 500 });
    },
  });
  originUrl = `http://127.0.0.1:${origin.port}`;
});
afterAll(() => origin.stop(true));

async function put(
  gw: GatewayProcess,
  key: string | undefined,
  init: { body: BodyInit; headers?: Record<string, string> },
) {
  const headers: Record<string, string> = { ...init.headers };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${gw.url}/upload`, {
    method: 'PUT',
    headers,
    body: init.body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}
const putJson = (gw: GatewayProcess, key: string | undefined, body: unknown) =>
  put(gw, key, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
function putForm(gw: GatewayProcess, key: string, bytes: Uint8Array<ArrayBuffer>, field = 'file') {
  const form = new FormData();
  form.append('purpose', 'test');
  form.append(field, new Blob([bytes]), 'upload.bin');
  return put(gw, key, { body: form });
}
/** Multipart written by hand and sent as a chunked stream (no Content-Length) in small odd pieces. */
function putStreamedForm(gw: GatewayProcess, key: string, bytes: Uint8Array) {
  const boundary = `b-${crypto.randomUUID()}`;
  const body = concat(
    enc(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n`),
    bytes,
    enc(`\r\n--${boundary}--\r\n`),
  );
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= body.length) return controller.close();
      const size = 1 + ((at * 31) % 65_537);
      controller.enqueue(body.slice(at, (at += size)));
    },
  });
  return put(gw, key, { body: stream, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
}

async function download(fileUrl: string) {
  const res = await fetch(fileUrl);
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function expectStored(res: { status: number; body: any }, bytes: Uint8Array, gw: GatewayProcess, type?: string) {
  expect(res.status).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['file_url', 'success']);
  expect(res.body.success).toBe(true);
  expect(res.body.file_url).toStartWith(`${gw.url}/files/`);
  const got = await download(res.body.file_url);
  expect(got.status).toBe(200);
  expect(sha256(got.bytes)).toBe(sha256(bytes));
  if (type) expect(got.type).toBe(type);
}

/** A free account: no top-ups, so 5 uploads a minute. */
const freeAccount = (gw: GatewayProcess) => createAccount(gw, uniqueEmail('upload-free'), 0);
async function topUp(gw: GatewayProcess, userId: number, usd: number) {
  const res = await api(gw, 'POST', `/admin/accounts/${userId}/topup`, { key: ADMIN_TOKEN, body: { amount_usd: usd } });
  expect(res.status).toBe(200);
}
async function toppedUpAccount(gw: GatewayProcess) {
  const account = await freeAccount(gw);
  await topUp(gw, account.userId, 5);
  return account;
}

/** A test that may wait for the next minute gets its own timeout, whatever the runner's default. */
const MINUTE_WAIT_TIMEOUT_MS = 30_000;

/** Per-minute tests need the whole burst inside one minute window: wait out a window about to end. */
async function freshMinute(needSeconds: number) {
  const into = (Date.now() % 60_000) / 1000;
  if (into > 60 - needSeconds) await Bun.sleep((60 - into) * 1000 + 200);
}

for (const mode of MODES) {
  describe(`PUT /upload [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let strict: GatewayProcess;
    let key: string;

    beforeAll(async () => {
      [gw, strict] = await Promise.all([
        mode
          .env('upload')
          .then((env) =>
            startGateway({ ...env, ALLOW_PRIVATE_URLS: 'true', MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) }),
          ),
        mode.env('uploadstrict').then((env) => startGateway(env)),
      ]);
      ({ key } = await toppedUpAccount(gw));
    }, 60_000);
    afterAll(async () => {
      await Promise.all([gw?.stop(), strict?.stop()]);
    });

    test('all three variants round-trip byte for byte', async () => {
      await expectStored(await putForm(gw, key, BIG), BIG, gw);
      await expectStored(await putStreamedForm(gw, key, BIG), BIG, gw);
      await expectStored(await putJson(gw, key, { base64: Buffer.from(BIG).toString('base64') }), BIG, gw);
      await expectStored(await putJson(gw, key, { file_url: `${originUrl}/big.bin` }), BIG, gw);
      // Redirects between allowed addresses are followed.
      await expectStored(await putJson(gw, key, { file_url: `${originUrl}/redirect` }), BIG, gw);
    });

    test('data URIs; the stored type comes from the bytes, whatever was declared', async () => {
      await expectStored(
        await putJson(gw, key, { base64: `data:application/pdf;base64,${Buffer.from(PNG).toString('base64')}` }),
        PNG,
        gw,
        'image/png',
      );
      for (const [bytes, type, ext] of [
        [PNG, 'image/png', 'png'],
        [WAV, 'audio/wav', 'wav'],
        [MP4, 'video/mp4', 'mp4'],
      ] as const) {
        const res = await putForm(gw, key, bytes);
        await expectStored(res, bytes, gw, type);
        expect(res.body.file_url).toEndWith(`.${ext}`);
      }
    });

    test('bad requests are envelopes with a clear message', async () => {
      expect(await putJson(gw, key, { base64: 'not base64!' })).toMatchObject({
        status: 422,
        body: { success: false, code: 422, data: { message: 'base64: invalid character "!"' } },
      });
      expect(await putJson(gw, key, {})).toMatchObject({
        status: 422,
        body: { data: { message: 'base64 or file_url is required' } },
      });
      expect(await putJson(gw, key, { file_url: 'ftp://example.com/x' })).toMatchObject({
        status: 422,
        body: { data: { message: 'file_url: only http and https URLs are allowed, not ftp:' } },
      });
      expect(await putJson(gw, key, { file_url: `${originUrl}/missing` })).toMatchObject({
        status: 422,
        body: { data: { message: 'file_url: the server answered 404 Not Found, not the file' } },
      });
      // A source that refuses the connection, or cuts its body short: the client's 422, not a 500.
      const cutter = Bun.listen({
        hostname: '127.0.0.1',
        port: 0,
        socket: {
          data(socket) {
            socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly ten b');
            socket.end();
          },
        },
      });
      const closed = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
      closed.stop(true);
      try {
        for (const url of [`http://127.0.0.1:${closed.port}/x.png`, `http://127.0.0.1:${cutter.port}/x.png`])
          expect(await putJson(gw, key, { file_url: url })).toMatchObject({
            status: 422,
            body: { data: { message: expect.stringMatching(/^file_url: the download failed \(/) } },
          });
      } finally {
        cutter.stop(true);
      }
      expect(await putForm(gw, key, PNG, 'attachment')).toMatchObject({
        status: 422,
        body: { data: { message: 'file: multipart field is required' } },
      });
      expect(await put(gw, key, { body: 'x', headers: { 'content-type': 'text/csv' } })).toMatchObject({ status: 415 });
      expect(await putForm(gw, key, new Uint8Array(0))).toMatchObject({
        status: 422,
        body: { data: { message: 'the file is empty' } },
      });
    });

    test('missing or wrong key → 401', async () => {
      expect(await putJson(gw, undefined, { base64: 'QUJD' })).toMatchObject({
        status: 401,
        body: { success: false, code: 401, data: { message: 'invalid or missing API key' } },
      });
      expect(await putJson(gw, 'sk-wrong', { base64: 'QUJD' })).toMatchObject({ status: 401 });
    });

    test('per-file maximum: 413 early from Content-Length, and mid-stream without one', async () => {
      const over = new Uint8Array(MAX_UPLOAD_BYTES + 1);
      const early = await putForm(gw, key, new Uint8Array(MAX_UPLOAD_BYTES + 2 * 1024 * 1024));
      expect(early).toMatchObject({ status: 413, body: { success: false, code: 413 } });
      expect(await putStreamedForm(gw, key, over)).toMatchObject({
        status: 413,
        body: { data: { message: `file is larger than ${MAX_UPLOAD_BYTES} bytes` } },
      });
      expect(await putJson(gw, key, { base64: Buffer.from(over).toString('base64') })).toMatchObject({ status: 413 });
      expect(await putJson(gw, key, { file_url: `${originUrl}/too-big.bin` })).toMatchObject({ status: 413 });
      // Exactly the maximum is fine.
      const exact = crypto.getRandomValues(new Uint8Array(MAX_UPLOAD_BYTES));
      await expectStored(await putStreamedForm(gw, key, exact), exact, gw);
    });

    test(
      'free accounts: 5 uploads a minute, the 6th is a 429 with Retry-After',
      async () => {
        await freshMinute(5);
        const free = await freeAccount(gw);
        for (let i = 0; i < 5; i++) expect((await putJson(gw, free.key, { base64: 'QUJD' })).status).toBe(200);
        const sixth = await putJson(gw, free.key, { base64: 'QUJD' });
        expect(sixth).toMatchObject({
          status: 429,
          body: { success: false, code: 429, data: { message: 'upload limit reached: 5 uploads per minute' } },
        });
        const retryAfter = Number(sixth.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      },
      MINUTE_WAIT_TIMEOUT_MS,
    );

    test(
      'topping up 5 USD lifts the limit to 50 a minute',
      async () => {
        await freshMinute(10);
        const account = await freeAccount(gw);
        for (let i = 0; i < 5; i++) expect((await putJson(gw, account.key, { base64: 'QUJD' })).status).toBe(200);
        expect((await putJson(gw, account.key, { base64: 'QUJD' })).status).toBe(429);
        await topUp(gw, account.userId, 5);
        // The 429 above was an attempt too: 6 counted so far, 44 more fit.
        for (let i = 0; i < 44; i++) expect((await putJson(gw, account.key, { base64: 'QUJD' })).status).toBe(200);
        const over = await putJson(gw, account.key, { base64: 'QUJD' });
        expect(over).toMatchObject({
          status: 429,
          body: { data: { message: 'upload limit reached: 50 uploads per minute' } },
        });
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      },
      MINUTE_WAIT_TIMEOUT_MS,
    );

    test('without ALLOW_PRIVATE_URLS, file_url to a private address → 422', async () => {
      const { key: strictKey } = await toppedUpAccount(strict);
      for (const url of [
        `${originUrl}/big.bin`,
        `http://localhost:${origin.port}/big.bin`,
        'http://169.254.169.254/latest/meta-data',
        'http://10.1.2.3/x',
      ]) {
        const res = await putJson(strict, strictKey, { file_url: url });
        expect(res).toMatchObject({
          status: 422,
          body: {
            success: false,
            code: 422,
            data: {
              message: expect.stringMatching(
                /^file_url: (points|resolves) to an? (loopback|private|link-local) address/,
              ),
            },
          },
        });
      }
      // Uploads that need no URL work as usual there.
      await expectStored(await putForm(strict, strictKey, PNG), PNG, strict, 'image/png');
    });
  });
}
