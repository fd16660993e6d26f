import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { FileTooLargeError } from '../../src/storage/byte-limit.ts';
import { connectStorage } from '../../src/storage/connect.ts';
import { LocalStorage } from '../../src/storage/local-storage.ts';
import { S3Storage } from '../../src/storage/s3-storage.ts';
import type { Storage } from '../../src/storage/storage.ts';

/** `count` chunks of `size` bytes; chunk i is filled with the byte i. */
function chunks(count: number, size: number): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i === count) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(i++ & 255));
    },
  });
}
const bytesOf = async (stream: ReadableStream<Uint8Array> | undefined) =>
  new Uint8Array(await new Response(stream).arrayBuffer());
const key = () => `k${crypto.randomUUID().replaceAll('-', '')}`;

let s3server: S3rver;
let s3: S3Storage;
const dirs: string[] = [];
const tempDir = async (label: string) => {
  const dir = await mkdtemp(join(tmpdir(), `gw-storage-${label}-`));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  s3server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: await tempDir('s3rver'),
    configureBuckets: [{ name: 'gateway-files', configs: [] }],
  });
  const { port } = (await s3server.run()) as { port: number };
  // s3rver accepts the fixed S3RVER/S3RVER credentials.
  s3 = new S3Storage({
    bucket: 'gateway-files',
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  });
});
afterAll(async () => {
  await s3server?.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const backends: Array<{ name: string; make: () => Promise<Storage> }> = [
  { name: 'local', make: async () => new LocalStorage(join(await tempDir('local'), 'files')) },
  { name: 's3 (s3rver)', make: async () => s3 },
];

for (const backend of backends) {
  describe(`storage [${backend.name}]`, () => {
    test('put a stream, read it whole and by ranges, stat, delete', async () => {
      const storage = await backend.make();
      const k = key();
      // 12 MiB in 1 MiB chunks: more than one multipart part on S3.
      const info = await storage.put(k, chunks(12, 1024 * 1024), { contentType: 'video/mp4' });
      expect(info.size).toBe(12 * 1024 * 1024);
      expect(info.etag).toMatch(/^[A-Za-z0-9-]+$/);
      expect(await storage.stat(k)).toEqual(info);

      const whole = await bytesOf(await storage.read(k));
      expect(whole.byteLength).toBe(12 * 1024 * 1024);
      expect(whole[0]).toBe(0);
      expect(whole[whole.length - 1]).toBe(11);

      const middle = await bytesOf(await storage.read(k, { start: 1024 * 1024 - 2, end: 1024 * 1024 + 1 }));
      expect([...middle]).toEqual([0, 0, 1, 1]);
      const last = await bytesOf(await storage.read(k, { start: 12 * 1024 * 1024 - 1, end: 12 * 1024 * 1024 - 1 }));
      expect([...last]).toEqual([11]);

      await storage.delete(k);
      expect(await storage.stat(k)).toBeUndefined();
      expect(await storage.read(k)).toBeUndefined();
      await storage.delete(k);
    });

    test('put bytes; unknown keys read as undefined', async () => {
      const storage = await backend.make();
      const k = key();
      const info = await storage.put(k, new TextEncoder().encode('hello world'), { contentType: 'text/plain' });
      expect(info.size).toBe(11);
      expect(new TextDecoder().decode(await bytesOf(await storage.read(k, { start: 6, end: 10 })))).toBe('world');
      expect(await storage.read(key())).toBeUndefined();
      expect(await storage.read(key(), { start: 0, end: 3 })).toBeUndefined();
      expect(await storage.stat(key())).toBeUndefined();
    });

    test('an empty object is stored and read back', async () => {
      const storage = await backend.make();
      const k = key();
      expect((await storage.put(k, chunks(0, 1), { contentType: 'application/octet-stream' })).size).toBe(0);
      expect((await bytesOf(await storage.read(k))).byteLength).toBe(0);
    });

    test('a stream past maxBytes aborts the write and leaves nothing behind', async () => {
      const storage = await backend.make();
      const k = key();
      const err = await storage
        .put(k, chunks(10, 1024 * 1024), { contentType: 'video/mp4', maxBytes: 6 * 1024 * 1024 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FileTooLargeError);
      expect((err as FileTooLargeError).status).toBe(413);
      expect(await storage.stat(k)).toBeUndefined();
      const tooBig = await storage
        .put(k, new Uint8Array(11), { contentType: 'text/plain', maxBytes: 10 })
        .catch((e: unknown) => e);
      expect(tooBig).toBeInstanceOf(FileTooLargeError);
      expect(await storage.stat(k)).toBeUndefined();
      // Exactly at the limit is fine.
      expect((await storage.put(k, chunks(2, 5), { contentType: 'text/plain', maxBytes: 10 })).size).toBe(10);
    });

    test('a failing source stream stores nothing', async () => {
      const storage = await backend.make();
      const k = key();
      let sent = 0;
      const broken = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ === 3) controller.error(new Error('upstream broke'));
          else controller.enqueue(new Uint8Array(1024));
        },
      });
      await expect(storage.put(k, broken, { contentType: 'image/png' })).rejects.toThrow('upstream broke');
      expect(await storage.stat(k)).toBeUndefined();
    });
  });
}

describe('local storage specifics', () => {
  test('keys are nested as ab/cd/<key>; a half-written file never appears at its path', async () => {
    const root = join(await tempDir('nested'), 'files');
    const storage = new LocalStorage(root);
    const k = 'AbCdEf0123456789xyzXYZ_-';
    expect(storage.pathOf(k)).toBe(join(root, 'Ab', 'Cd', k));

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let step = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (step === 2) await gate;
        if (step++ === 4) return controller.close();
        controller.enqueue(new Uint8Array(100).fill(step));
      },
    });
    const writing = storage.put(k, slow, { contentType: 'image/png' });
    await Bun.sleep(50);
    expect(await Bun.file(storage.pathOf(k)).exists()).toBe(false);
    expect((await readdir(join(root, '.tmp'))).length).toBe(1);
    release();
    expect((await writing).size).toBe(400);
    expect(await Bun.file(storage.pathOf(k)).exists()).toBe(true);
    expect(await readdir(join(root, '.tmp'))).toEqual([]);
  });

  test('a put syncs the directory holding the new name, and every directory it created, after the rename', async () => {
    const base = await tempDir('dirsync');
    const root = join(base, 'files');
    const synced: string[] = [];
    let storage!: LocalStorage;
    let current = 'AbCd0001';
    storage = new LocalStorage(root, async (dir) => {
      // Synced once the renamed file is there: the name it records is the final one.
      expect(await Bun.file(storage.pathOf(current)).exists()).toBe(true);
      synced.push(dir);
    });
    await storage.put(current, new Uint8Array([1]), { contentType: 'text/plain' });
    // root, Ab and Cd were created: each one's entry lives in its parent.
    expect(synced).toEqual([join(root, 'Ab', 'Cd'), join(root, 'Ab'), root, base]);
    synced.length = 0;
    current = 'AbCd0002';
    await storage.put(current, new Uint8Array([2]), { contentType: 'text/plain' });
    expect(synced).toEqual([join(root, 'Ab', 'Cd')]);
    // The real sync (no hook) works on this file system.
    await new LocalStorage(root).put('AbEf0003', new Uint8Array([3]), { contentType: 'text/plain' });
  });

  test('an aborted write removes its temp file', async () => {
    const root = join(await tempDir('abort'), 'files');
    const storage = new LocalStorage(root);
    await expect(
      storage.put('abcdef', chunks(5, 100), { contentType: 'image/png', maxBytes: 250 }),
    ).rejects.toBeInstanceOf(FileTooLargeError);
    expect(await readdir(join(root, '.tmp'))).toEqual([]);
  });

  test('a rewrite changes the ETag', async () => {
    const storage = new LocalStorage(join(await tempDir('etag'), 'files'));
    const a = await storage.put('samekey', new Uint8Array([1, 2, 3]), { contentType: 'text/plain' });
    const b = await storage.put('samekey', new Uint8Array([4, 5, 6]), { contentType: 'text/plain' });
    expect(a.size).toBe(b.size);
    expect(a.etag).not.toBe(b.etag);
  });

  test('keys that could escape the root are refused', async () => {
    const storage = new LocalStorage(join(await tempDir('escape'), 'files'));
    for (const bad of ['../../etc/passwd', 'a/b/c/d', '.hidden', 'ab..cd', '', 'abc', 'x\0yzw'])
      expect(() => storage.pathOf(bad)).toThrow('invalid storage key');
  });

  test('connectStorage picks local without S3_BUCKET and S3 with it', () => {
    expect(connectStorage({ dataDir: '/tmp/x' }).kind).toBe('local');
    expect(connectStorage({ dataDir: '/tmp/x', s3: { bucket: 'b', endpoint: 'http://127.0.0.1:9' } }).kind).toBe('s3');
  });
});
