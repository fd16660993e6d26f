import { describe, expect, test } from 'bun:test';
import { drainRest, IdleTimeout, idleWatch } from '../../src/llm/upstream-events.ts';

/** A stream whose n-th chunk comes `gaps[n]` ms after it is asked for; records its cancellation. */
function paced(gaps: number[]) {
  let cancelled: unknown;
  let i = 0;
  const stream = new ReadableStream<number>({
    async pull(c) {
      if (i >= gaps.length) return c.close();
      await Bun.sleep(gaps[i] as number);
      c.enqueue(i++);
    },
    cancel(reason) {
      cancelled = reason;
    },
  });
  return { reader: stream.getReader(), cancelled: () => cancelled };
}

describe('idleWatch: one timer per stream, counting only the time a read waits for the upstream', () => {
  test('a read that waits past the limit fails with IdleTimeout, and the upstream is cancelled', async () => {
    const source = paced([5, 400]);
    const watched = idleWatch(source.reader, 100);
    expect((await watched.read()).value).toBe(0);
    const started = performance.now();
    const err = await watched.read().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdleTimeout);
    expect(performance.now() - started).toBeLessThan(300);
    expect(source.cancelled()).toBeInstanceOf(IdleTimeout);
    // Every later read fails the same way.
    expect(await watched.read().catch((e: unknown) => e)).toBe(err);
  });

  test('time between reads does not count: a slow consumer of a prompt upstream never times out', async () => {
    const source = paced([1, 1, 1, 1]);
    const watched = idleWatch(source.reader, 60);
    const seen: number[] = [];
    for (;;) {
      const read = await watched.read();
      if (read.done) break;
      seen.push(read.value);
      await Bun.sleep(90); // longer than the limit, between reads
    }
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(source.cancelled()).toBeUndefined();
  });

  test('many prompt reads adding up past the limit never time out; a timer left behind does nothing', async () => {
    const source = paced(Array.from({ length: 30 }, () => 8));
    const watched = idleWatch(source.reader, 50);
    let reads = 0;
    while (!(await watched.read()).done) reads++;
    expect(reads).toBe(30);
    // Its timer, if one is left, fires with no read pending and lets go.
    await Bun.sleep(120);
    expect(source.cancelled()).toBeUndefined();
  });

  test('cancel gives the upstream up with its reason, and the watch never fires after it', async () => {
    const source = paced([5, 5, 5]);
    const watched = idleWatch(source.reader, 40);
    expect((await watched.read()).value).toBe(0);
    const reason = new Error('client gone');
    await watched.cancel(reason);
    expect(source.cancelled()).toBe(reason);
    await Bun.sleep(80);
    expect(source.cancelled()).toBe(reason);
  });

  test('no limit: plain reads', async () => {
    const source = paced([150]);
    expect((await idleWatch(source.reader, 0).read()).value).toBe(0);
  });
});

describe('release: the rest of a body whose consumer is done is read, not cut', () => {
  /** Whether the stream was read to its end (its last pull ran) or cancelled. */
  function tracked(gaps: number[]) {
    const source = paced(gaps);
    let ended = false;
    const stream = new ReadableStream<number>({
      async pull(c) {
        const read = await source.reader.read();
        if (read.done) {
          ended = true;
          c.close();
        } else c.enqueue(read.value);
      },
      cancel: (reason) => source.reader.cancel(reason),
    });
    return { reader: stream.getReader(), ended: () => ended, cancelled: source.cancelled };
  }

  test('a body that ends a moment after the last event is read to its end, not cancelled (the connection is kept)', async () => {
    const source = tracked([1, 30, 1]);
    const watched = idleWatch(source.reader, 1_000);
    expect((await watched.read()).value).toBe(0);
    watched.release();
    await Bun.sleep(80);
    expect(source.ended()).toBe(true);
    expect(source.cancelled()).toBeUndefined();
  });

  test('a rest that takes too long, or too many reads, is cancelled after all', async () => {
    const slow = paced([1, 5_000]);
    const started = performance.now();
    await drainRest(slow.reader, 50);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(String(slow.cancelled())).toContain('did not end within 50 ms');

    const chatty = tracked(Array.from({ length: 100 }, () => 0));
    await drainRest(chatty.reader, 1_000, 5);
    expect(chatty.ended()).toBe(false);
    expect(String(chatty.cancelled())).toContain('went on past 5 reads');
  });
});
