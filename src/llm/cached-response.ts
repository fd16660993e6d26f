import type { CachedAnswer } from './response-cache.ts';
import { SSE_HEADERS } from '../http/answer-headers.ts';

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A call being answered whose answer may be cached once it is known to have completed normally. */
export interface Capture {
  put(answer: CachedAnswer): Promise<void>;
  /** Set by the stream's outcome: only a normal finish is cached, never an error or a cut. */
  completed: boolean;
}

/**
 * A cache hit as the client receives it: the stored body, or the stored stream event by event.
 * It costs nothing, whatever the call that was stored cost (or held, for a stream).
 */
export function cachedResponse(hit: CachedAnswer): Response {
  const headers = {
    ...hit.headers,
    'x-gateway-attempts': '0',
    'x-gateway-cache': 'hit',
    'x-gateway-cost-usd': '0',
  };
  if (hit.kind === 'json-text')
    return new Response(hit.text, { headers: { 'content-type': 'application/json;charset=utf-8', ...headers } });
  if (hit.kind === 'json') return Response.json(hit.body, { headers });
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = hit.chunks[next++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(utf8.encode(chunk));
    },
  });
  return new Response(body, { headers: { ...SSE_HEADERS, ...headers } });
}

/**
 * Passes a client stream through while keeping its pieces (each one upstream read's worth of
 * events); once it has ended normally, they are stored to be replayed in the same pieces.
 */
export function capturedStream(
  stream: ReadableStream<Uint8Array>,
  capture: Capture,
  headers: Record<string, string>,
): ReadableStream<Uint8Array> {
  const chunks: string[] = [];
  let bytes = 0;
  let keeping = true;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(chunk);
        if (!keeping) return;
        bytes += chunk.byteLength;
        // Pieces are whole strings encoded at once, so each decodes on its own.
        if (bytes > 1 << 20) keeping = false;
        else chunks.push(text.decode(chunk));
      },
      flush() {
        if (keeping && capture.completed) void capture.put({ kind: 'stream', chunks, headers });
      },
    }),
  );
}
