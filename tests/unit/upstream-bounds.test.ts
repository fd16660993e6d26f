import { describe, expect, test } from 'bun:test';
import { readUpstreamBytes, readUpstreamText, upstreamErrorText } from '../../providers/common/upstream-body.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import { UpstreamEventTooLarge, upstreamEvents } from '../../src/llm/upstream-events.ts';

/**
 * What a broken or hostile upstream can make the gateway hold: a whole answer past
 * MAX_UPSTREAM_BODY_BYTES, or a stream event that never ends past MAX_UPSTREAM_EVENT_BYTES, is
 * refused and the upstream cancelled, before it takes the process's memory.
 */

/** A body of `chunks` pieces of `size` bytes (then more for ever when `endless`); records its cancellation. */
function body(size: number, chunks: number, opts: { endless?: boolean; head?: string } = {}) {
  let sent = 0;
  let cancelled = false;
  const piece = new Uint8Array(size).fill(0x78);
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent === 0 && opts.head) c.enqueue(new TextEncoder().encode(opts.head));
      if (!opts.endless && sent >= chunks) return c.close();
      sent++;
      c.enqueue(piece);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled, sent: () => sent };
}

describe('readUpstreamText', () => {
  test('a body within the bound is read whole, declared or chunked, a leading BOM dropped as text() does', async () => {
    expect(await readUpstreamText(new Response('\uFEFF{"a":1}'), 100)).toBe('{"a":1}');
    const declared = new Response('{"a":2}', { headers: { 'content-length': '7' } });
    expect(await readUpstreamText(declared, 7)).toBe('{"a":2}');
    const chunked = body(10, 5);
    expect(await readUpstreamText(new Response(chunked.stream), 100)).toBe('x'.repeat(50));
  });

  test('a chunked body past the bound is malformed and cancelled at once', async () => {
    const endless = body(1024, 0, { endless: true });
    const err = await readUpstreamText(new Response(endless.stream), 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: 'malformed', upstreamStatus: 200 });
    expect((err as Error).message).toContain('larger than 10000 bytes');
    expect(endless.cancelled()).toBe(true);
    expect(endless.sent()).toBeLessThan(20);
  });

  test('a declared length past the bound is refused before a byte is read', async () => {
    const big = body(1024, 0, { endless: true });
    const response = new Response(big.stream, { headers: { 'content-length': '20000' } });
    expect(await readUpstreamText(response, 10_000).catch((e: UpstreamError) => e.kind)).toBe('malformed');
    expect(big.sent()).toBeLessThanOrEqual(1);
  });
});

describe('upstreamEvents', () => {
  test('an event that never ends fails the read past the bound and cancels the upstream', async () => {
    const endless = body(4096, 0, { endless: true, head: 'data: {"choices":[{"delta":{"content":"' });
    const events = upstreamEvents(endless.stream, 'chat-completions', 'm', 0, 100_000);
    const err = await (async () => {
      for (;;) await events.next();
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamEventTooLarge);
    expect(endless.cancelled()).toBe(true);
    expect(endless.sent()).toBeLessThan(40);
  });

  test('events of any number, each within the bound, pass however much the stream carries', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'y'.repeat(3000) } }] })}\n\n`;
    const bytes = new TextEncoder().encode(event.repeat(100));
    const stream = new Response(bytes).body as ReadableStream<Uint8Array>;
    const events = upstreamEvents(stream, 'chat-completions', 'm', 0, 10_000);
    let messages = 0;
    for (;;) {
      const read = await events.next();
      messages += read.messages.length;
      if (read.done) break;
    }
    expect(messages).toBe(100);
  });
});

describe('upstreamErrorText', () => {
  test('an error answer is read to its first bytes only, the rest cancelled; a short one whole', async () => {
    expect(await upstreamErrorText(new Response('{"error":{"message":"nope"}}', { status: 400 }))).toBe(
      '{"error":{"message":"nope"}}',
    );
    const endless = body(1024, 0, { endless: true });
    const text = await upstreamErrorText(new Response(endless.stream, { status: 500 }), 5_000);
    expect(text).toBe('x'.repeat(5_000));
    expect(endless.cancelled()).toBe(true);
    expect(await upstreamErrorText(new Response(null, { status: 502 }))).toBe('');
  });
});

describe('readUpstreamBytes', () => {
  test('bytes within the bound come whole, declared or not; past it the answer is malformed and cancelled', async () => {
    expect((await readUpstreamBytes(new Response(new Uint8Array([1, 2, 3])), 3)).byteLength).toBe(3);
    const endless = body(1024, 0, { endless: true });
    expect(await readUpstreamBytes(new Response(endless.stream), 8_000).catch((e: UpstreamError) => e.kind)).toBe(
      'malformed',
    );
    expect(endless.cancelled()).toBe(true);
  });
});
