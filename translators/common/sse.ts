import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';

export type { EventSourceMessage };

/**
 * One server-sent event as text. `data` is serialised once here, never spliced by hand. A payload
 * with line breaks (an upstream event whose data spanned several `data:` lines, which the parser
 * joined with `\n`) is written back as one `data:` line per line, or the client's parser would
 * read the second line as a field of its own and the event's data would be cut.
 * @see https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */
export function formatSse(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  // JSON.stringify never writes a raw line break; a passed-through payload only when its upstream did.
  return sseEvent(payload, payload.includes('\n'), event);
}

/**
 * `formatSse` for a payload whose caller knows whether it may hold a line break: a passed-through
 * event's data with its model spliced in has at most the line breaks of the data the parser
 * handed over, and asking that flat string spares scanning (so first copying) the spliced one.
 */
export function sseEvent(payload: string, mayBreakLines: boolean, event?: string): string {
  const lines = mayBreakLines ? payload.replaceAll('\n', '\ndata: ') : payload;
  return event ? `event: ${event}\ndata: ${lines}\n\n` : `data: ${lines}\n\n`;
}

/** Bytes of an SSE body → parsed messages, through eventsource-parser (the only SSE decoder we use). */
export function parseSseBytes(body: ReadableStream<Uint8Array>): ReadableStream<EventSourceMessage> {
  // The cast bridges lib.dom's BufferSource writable with Bun's Uint8Array streams (same runtime object).
  const decoder = new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>;
  return body.pipeThrough(decoder).pipeThrough(new EventSourceParserStream());
}

/**
 * An SSE message whose `data` its reader already parsed (src/llm/upstream-events.ts), so the
 * stream's decoder and the passthrough classifier share one parse instead of making one each.
 * Both only read `json`.
 */
export type ParsedMessage = EventSourceMessage & { readonly json?: unknown };

/** The message's `data` as JSON (undefined when it is not JSON): its reader's parse when it made one. */
export function messageJson(message: ParsedMessage): unknown {
  return 'json' in message ? message.json : parseJsonData(message.data);
}

/** Parses a `data:` payload, or returns undefined when it is not JSON (callers report it). */
export function parseJsonData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}
