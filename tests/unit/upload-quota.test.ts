import { describe, expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { FREE_PLAN, TOPPED_UP_PLAN, uploadPlanFor, type UploadPlan } from '../../src/uploads/upload-plan.ts';
import { UploadQuota } from '../../src/uploads/upload-quota.ts';
import { UploadService } from '../../src/uploads/upload-service.ts';
import { rejection } from '../helpers/rejection.ts';

/** 2025-03-04 23:59:30 UTC: 30 s to the end of the minute and of the day. */
const NOW = Date.UTC(2025, 2, 4, 23, 59, 30);

function chunks(sizes: number[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i === sizes.length) return controller.close();
      controller.enqueue(new Uint8Array(sizes[i++] as number));
    },
  });
}
const drain = (stream: ReadableStream<Uint8Array>) => new Response(stream).arrayBuffer();

describe('upload plans and quotas', () => {
  test('the plan follows the top-ups: 5 USD or more is the topped-up plan', () => {
    expect(uploadPlanFor(0)).toBe(FREE_PLAN);
    expect(uploadPlanFor(4.99)).toBe(FREE_PLAN);
    expect(uploadPlanFor(5)).toBe(TOPPED_UP_PLAN);
    expect(FREE_PLAN).toMatchObject({ uploadsPerMinute: 5, bytesPerDay: 1024 ** 3 });
    expect(TOPPED_UP_PLAN).toMatchObject({ uploadsPerMinute: 50, bytesPerDay: 10 * 1024 ** 3 });
  });

  test('uploads per minute: the one past the limit is a 429 with Retry-After to the window end', async () => {
    const quota = new UploadQuota(new MemoryStore(() => NOW), () => NOW);
    for (let i = 0; i < 5; i++) await quota.admit(1, FREE_PLAN);
    const err = await rejection(quota.admit(1, FREE_PLAN));
    expect(err).toMatchObject({
      status: 429,
      message: 'upload limit reached: 5 uploads per minute',
      headers: { 'retry-after': '30' },
    });
    // Another account has its own counter.
    await quota.admit(2, FREE_PLAN);
  });

  test('bytes per day: counted as they stream, cut off when crossing, refused once used up', async () => {
    const plan: UploadPlan = { name: 'free', uploadsPerMinute: 100, bytesPerDay: 20 * 1024 * 1024 };
    const store = new MemoryStore(() => NOW);
    const quota = new UploadQuota(store, () => NOW);
    const key = 'upload:bytes:7:2025-03-04';

    const first = await quota.admit(7, plan);
    await drain(first.meter(chunks([6 * 1024 * 1024, 6 * 1024 * 1024])));
    await first.commit();
    expect(Number(await store.get(key))).toBe(12 * 1024 * 1024);

    // 12 MB used; 9 MB more would cross 20 MB: cut off at that chunk with a 429, bytes taken back.
    const second = await quota.admit(7, plan);
    const err = await rejection(drain(second.meter(chunks([4 * 1024 * 1024, 5 * 1024 * 1024]))));
    expect(err).toMatchObject({ status: 429, headers: { 'retry-after': '30' } });
    expect(second.failure).toBe(err);
    await second.release();
    expect(Number(await store.get(key))).toBe(12 * 1024 * 1024);

    // Exactly up to the budget is fine; after that the day is used up before any byte is read.
    const third = await quota.admit(7, plan);
    await drain(third.meter(chunks([8 * 1024 * 1024])));
    await third.commit();
    expect(await rejection(quota.admit(7, plan))).toMatchObject({
      status: 429,
      message: 'daily upload volume of 20 MB used up; it resets at 00:00 UTC',
    });
  });

  test('concurrent uploads see each other through the shared counter', async () => {
    const plan: UploadPlan = { name: 'free', uploadsPerMinute: 100, bytesPerDay: 40 * 1024 * 1024 };
    const store = new MemoryStore(() => NOW);
    const quota = new UploadQuota(store, () => NOW);
    const a = await quota.admit(3, plan);
    const b = await quota.admit(3, plan);
    const mb = 1024 * 1024;
    const readerA = a.meter(chunks([16 * mb, 16 * mb])).getReader();
    await readerA.read(); // A charged 16 MB
    const results = await Promise.allSettled([drain(b.meter(chunks([16 * mb, 16 * mb])))]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { status: 429 } });
  });

  test('past the file limit the chunk that crossed it is the 413, before the source can fail otherwise', async () => {
    const quota = new UploadQuota(new MemoryStore(() => NOW), () => NOW);
    const meter = await quota.admit(4, FREE_PLAN);
    const mb = 1024 * 1024;
    // A multipart part whose body ends without its delimiter: the read after the second chunk
    // fails with the parser's 422. The file store may not have consumed the crossing chunk by then.
    let reads = 0;
    const source = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          reads++;
          if (reads <= 2) return controller.enqueue(new Uint8Array(3 * mb));
          controller.error(
            Object.assign(new Error('file: multipart body ended before the part was complete'), { status: 422 }),
          );
        },
      },
      { highWaterMark: 0 },
    );
    const err = await rejection(drain(meter.meter(source, { maxBytes: 4 * mb })));
    expect(err).toMatchObject({ status: 413, message: `file is larger than ${4 * mb} bytes` });
    expect(meter.failure).toBe(err);
    // The source was not read past the crossing chunk.
    expect(reads).toBe(2);
  });
});

describe('an upload that fails after its file was stored', () => {
  test('its bytes cannot be counted (the store went away): the file is removed, not kept uncounted', async () => {
    const store = new MemoryStore();
    const removed: string[] = [];
    const files = {
      save: async (input: { body: ReadableStream<Uint8Array> }) => {
        const size = (await new Response(input.body).arrayBuffer()).byteLength;
        // The store goes away once the bytes are in: the day's counter cannot take them.
        store.incr = async () => {
          throw new Error('store unavailable');
        };
        return {
          id: 'file-1',
          url: 'http://gw/files/file-1.png',
          contentType: 'image/png',
          sizeBytes: size,
          sha256: '',
        };
      },
      remove: async (id: string) => {
        removed.push(id);
      },
    };
    const ctx = {
      env: { maxUploadBytes: 1_000_000, allowPrivateUrls: false, bodyTimeoutMs: 30_000 },
      store,
      accounts: { get: async () => ({ topped_up_usd: '0' }) },
      files,
    } as unknown as ConstructorParameters<typeof UploadService>[0];
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    const request = new Request('http://gw/upload', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ base64: png.toString('base64') }),
    });
    expect(await rejection(new UploadService(ctx).upload(1, request))).toMatchObject({ message: 'store unavailable' });
    expect(removed).toEqual(['file-1']);
  });
});
