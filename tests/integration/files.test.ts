import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Elysia } from 'elysia';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { errorHandler } from '../../src/http/error-handler.ts';
import { Logger } from '../../src/ops/logger.ts';
import { fileRoutes } from '../../src/routes/files.routes.ts';
import { FileTooLargeError } from '../../src/storage/byte-limit.ts';
import { FileStore } from '../../src/storage/file-store.ts';
import { LocalStorage } from '../../src/storage/local-storage.ts';
import { MODES, freePort, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { createTestDatabase } from '../helpers/services.ts';

/** A 1x1 PNG followed by padding, so ranges have room. */
const PNG = new Uint8Array([
  ...[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  ...Array.from({ length: 92 }, (_, i) => i),
]);
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex');
const UPLOAD_URL = 'https://files.example.test';

async function openDatabase(kind: 'postgres' | 'pglite', dataDir: string): Promise<DatabaseHandle> {
  const databaseUrl = kind === 'postgres' ? await createTestDatabase('files') : undefined;
  const database = await connectDatabase({ databaseUrl, dataDir });
  await migrateToLatest(database.db);
  return database;
}

for (const dbKind of ['postgres', 'pglite'] as const) {
  describe(`file serving, in process [${dbKind}]`, () => {
    let dir: string;
    let database: DatabaseHandle;
    let files: FileStore;
    let app: { handle(request: Request): Promise<Response> };
    const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      app.handle(new Request(`http://gw.test${path}`, { method, headers }));

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'gw-files-'));
      database = await openDatabase(dbKind, dir);
      files = new FileStore(database.db, new LocalStorage(join(dir, 'files')), {
        uploadUrl: UPLOAD_URL,
        maxBytes: 1024 * 1024,
      });
      app = new Elysia().use(errorHandler(new Logger('silent'))).use(fileRoutes({ files }));
    });
    afterAll(async () => {
      await database?.close();
      await rm(dir, { recursive: true, force: true });
    });

    test('save sniffs the type, records the row and returns a public URL with an extension', async () => {
      const saved = await files.save({ body: PNG, source: 'task_output', accountId: null });
      expect(saved).toEqual({
        id: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
        url: `${UPLOAD_URL}/files/${saved.id}.png`,
        contentType: 'image/png',
        sizeBytes: 100,
        sha256: sha256(PNG),
      });
      const row = await database.db
        .selectFrom('stored_files')
        .selectAll()
        .where('id', '=', saved.id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        id: saved.id,
        storage_key: saved.id,
        content_type: 'image/png',
        size_bytes: 100,
        sha256: sha256(PNG),
        source: 'task_output',
        account_id: null,
      });
    });

    test('GET serves the bytes with type, length, strong ETag and safe headers; no auth needed', async () => {
      const { id } = await files.save({ body: PNG, source: 'upload', accountId: null });
      for (const path of [`/files/${id}.png`, `/files/${id}`]) {
        const res = await get(path);
        expect(res.status).toBe(200);
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG);
        expect(Object.fromEntries(res.headers)).toMatchObject({
          'content-type': 'image/png',
          'content-length': '100',
          etag: `"${sha256(PNG)}"`,
          'accept-ranges': 'bytes',
          'x-content-type-options': 'nosniff',
          'content-disposition': `inline; filename="${id}.png"`,
          'cache-control': 'private, max-age=31536000, immutable',
        });
        expect(res.headers.get('content-security-policy')).toBeNull();
      }
    });

    test('HEAD answers the headers without a body', async () => {
      const { id } = await files.save({ body: PNG, source: 'upload', accountId: null });
      const res = await get(`/files/${id}.png`, { range: 'bytes=0-3' }, 'HEAD');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe('100');
      expect(res.headers.get('etag')).toBe(`"${sha256(PNG)}"`);
      expect(await res.text()).toBe('');
    });

    test('If-None-Match → 304; If-Range with another validator → the whole file', async () => {
      const { id } = await files.save({ body: PNG, source: 'upload', accountId: null });
      const etag = `"${sha256(PNG)}"`;
      const res = await get(`/files/${id}.png`, { 'if-none-match': `"other", ${etag}` });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(await res.text()).toBe('');
      expect((await get(`/files/${id}.png`, { 'if-none-match': '"other"' })).status).toBe(200);
      const stale = await get(`/files/${id}.png`, { range: 'bytes=0-3', 'if-range': '"old"' });
      expect(stale.status).toBe(200);
      expect(stale.headers.get('content-length')).toBe('100');
      const fresh = await get(`/files/${id}.png`, { range: 'bytes=0-3', 'if-range': etag });
      expect(fresh.status).toBe(206);
    });

    test('Range: a-b, a-, -n → 206 with Content-Range; unsatisfiable → 416', async () => {
      const { id } = await files.save({ body: PNG, source: 'upload', accountId: null });
      const cases: Array<[string, number, number]> = [
        ['bytes=0-3', 0, 3],
        ['bytes=90-', 90, 99],
        ['bytes=-5', 95, 99],
        ['bytes=98-1000', 98, 99],
      ];
      for (const [range, start, end] of cases) {
        const res = await get(`/files/${id}.png`, { range });
        expect(res.status).toBe(206);
        expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/100`);
        expect(res.headers.get('content-length')).toBe(String(end - start + 1));
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG.subarray(start, end + 1));
      }
      const bad = await get(`/files/${id}.png`, { range: 'bytes=100-' });
      expect(bad.status).toBe(416);
      expect(bad.headers.get('content-range')).toBe('bytes */100');
      expect(await bad.json()).toEqual({
        success: false,
        code: 416,
        data: { message: 'range not satisfiable: the file has 100 bytes' },
      });
      // Multiple ranges are answered with the whole file.
      expect((await get(`/files/${id}.png`, { range: 'bytes=0-1,5-6' })).status).toBe(200);
    });

    test('HTML, SVG and unknown types are attachments, never rendered in our origin', async () => {
      const html = await files.save({
        body: new TextEncoder().encode('<script>alert(1)</script>'),
        contentType: 'text/html',
        source: 'upload',
        accountId: null,
      });
      const svg = await files.save({
        body: new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'),
        source: 'upload',
        accountId: null,
      });
      const blob = await files.save({ body: new Uint8Array([0, 1, 2, 0xff]), source: 'upload', accountId: null });
      expect(svg.contentType).toBe('image/svg+xml');
      expect(blob.url).toBe(`${UPLOAD_URL}/files/${blob.id}`);
      for (const [saved, type, disposition] of [
        [html, 'text/html', `attachment; filename="${html.id}"`],
        [svg, 'image/svg+xml', `attachment; filename="${svg.id}.svg"`],
        [blob, 'application/octet-stream', `attachment; filename="${blob.id}"`],
      ] as const) {
        const res = await get(`/files/${saved.id}`);
        expect(res.headers.get('content-type')).toBe(type);
        expect(res.headers.get('content-disposition')).toBe(disposition);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      }
    });

    test('a streamed save sniffs from the first bytes; declared types are kept', async () => {
      const wav = new Uint8Array([
        ...new TextEncoder().encode('RIFF'),
        0,
        0,
        0,
        0,
        ...new TextEncoder().encode('WAVEfmt '),
        ...new Uint8Array(2000),
      ]);
      const sniffed = await files.save({
        body: new Response(wav).body as ReadableStream<Uint8Array>,
        source: 'voice_sample',
        accountId: null,
      });
      expect(sniffed).toMatchObject({ contentType: 'audio/wav', sizeBytes: wav.byteLength, sha256: sha256(wav) });
      expect(sniffed.url.endsWith('.wav')).toBe(true);
      const declared = await files.save({
        body: new Response(wav).body as ReadableStream<Uint8Array>,
        contentType: 'audio/x-wav',
        source: 'upload',
        accountId: null,
      });
      expect(declared.contentType).toBe('audio/x-wav');
      const res = await get(`/files/${sniffed.id}.wav`);
      expect(res.headers.get('content-disposition')).toStartWith('inline');
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(wav);
    });

    test('a save past maxBytes stores neither bytes nor row', async () => {
      const before = await database.db
        .selectFrom('stored_files')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const big = new Response(new Uint8Array(5000)).body as ReadableStream<Uint8Array>;
      await expect(files.save({ body: big, source: 'upload', accountId: null, maxBytes: 4096 })).rejects.toBeInstanceOf(
        FileTooLargeError,
      );
      await expect(
        files.save({ body: new Uint8Array(5000), source: 'upload', accountId: null, maxBytes: 4096 }),
      ).rejects.toBeInstanceOf(FileTooLargeError);
      const after = await database.db
        .selectFrom('stored_files')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });

    test('unknown or malformed ids are 404 envelopes; removed files are gone', async () => {
      const missing = await get('/files/AAAAAAAAAAAAAAAAAAAAAAAA.png');
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({
        success: false,
        code: 404,
        data: { message: 'file AAAAAAAAAAAAAAAAAAAAAAAA.png not found' },
      });
      expect((await get('/files/..%2F..%2Fetc%2Fpasswd')).status).toBe(404);
      expect((await get('/files/short', {}, 'HEAD')).status).toBe(404);
      const saved = await files.save({ body: PNG, source: 'upload', accountId: null });
      await files.remove(saved.id);
      expect((await get(`/files/${saved.id}.png`)).status).toBe(404);
    });
  });
}

for (const mode of MODES) {
  describe(`file serving through the gateway process [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let saved: { id: string; url: string };
    let dataDir: string;

    beforeAll(async () => {
      const env = await mode.env('files');
      dataDir = env.DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'gw-files-proc-')));
      const port = await freePort();
      const uploadUrl = `http://127.0.0.1:${port}`;
      // Stored before the start: the embedded database can have only one process open at a time.
      const database = await connectDatabase({ databaseUrl: env.DATABASE_URL, dataDir });
      await migrateToLatest(database.db);
      saved = await new FileStore(database.db, new LocalStorage(join(dataDir, 'files')), {
        uploadUrl,
        maxBytes: 1024 * 1024,
      }).save({
        body: PNG,
        source: 'task_output',
        accountId: null,
      });
      await database.close();
      gw = await startGateway({ ...env, DATA_DIR: dataDir, PORT: String(port) });
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('the stored URL opens without a key, whole, by range and by HEAD', async () => {
      expect(saved.url).toBe(`${gw.url}/files/${saved.id}.png`);
      const res = await fetch(saved.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('content-length')).toBe('100');
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG);

      const part = await fetch(saved.url, { headers: { range: 'bytes=-10' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe('bytes 90-99/100');
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(PNG.subarray(90));

      const head = await fetch(saved.url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe('100');
      expect(head.headers.get('etag')).toBe(`"${sha256(PNG)}"`);

      expect((await fetch(saved.url, { headers: { 'if-none-match': head.headers.get('etag') ?? '' } })).status).toBe(
        304,
      );
      expect((await fetch(`${gw.url}/files/AAAAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(404);
    });
  });
}
