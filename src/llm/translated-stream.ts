import type { StreamEvent } from '../../translators/canonical/index.ts';
import type { StreamTranslator } from '../../translators/common/stream-translator.ts';
import type { ClientFormat, EncodeContext } from './client-format.ts';
import type { OutcomeTap } from './outcome-tap.ts';
import { passFailure, readFailure, type Send, type Step, type StreamEngine } from './stream-step.ts';
import { idleWatch, type StartedStream, type UpstreamEvents } from './upstream-events.ts';

/**
 * Canonical events → client text: each event passes the tap (billing, stored state) and the
 * client format's encoder. A broken source becomes one canonical error, so the client's stream
 * always ends with its format's own error event, never a silent cut.
 */
function encodeInto(tap: OutcomeTap, encoder: StreamTranslator<StreamEvent, string>, send: (text: string) => void) {
  return async (events: StreamEvent[]): Promise<string> => {
    let out = '';
    for (const event of events) {
      const waiting = tap.accept(event);
      if (waiting) {
        // The ending waits for the charge to commit; what precedes it goes to the client now.
        if (out) send(out);
        out = '';
        await waiting;
      }
      for (const piece of encoder.push(event)) out += piece;
    }
    return out;
  };
}

/** Canonical events from an upstream, one read at a time; a read failure is thrown to the caller. */
interface EventSource {
  next(): Promise<{ events: StreamEvent[]; done: boolean }>;
  cancel(reason?: unknown): Promise<void>;
  /** After the upstream's healthy end: the rest is read in the background (upstream-events.ts `drainRest`). */
  release(): void;
}

/** The upstream's own ending is among these events (a canonical stream ends with one of the two). */
const endsStream = (events: StreamEvent[]): 'finish' | 'error' | undefined => {
  for (const event of events) if (event.type === 'finish' || event.type === 'error') return event.type;
  return undefined;
};

/** A provider that emits canonical events itself (the sandbox). */
function canonicalSource(events: ReadableStream<StreamEvent>, idleMs?: number): EventSource {
  const reader = idleWatch(events.getReader(), idleMs);
  return {
    async next() {
      const read = await reader.read();
      return read.done ? { events: [], done: true } : { events: [read.value], done: false };
    },
    cancel: reader.cancel,
    release: reader.release,
  };
}

/** An upstream wire stream, each read's messages decoded once (upstream-events.ts). */
function decodedSource(events: UpstreamEvents): EventSource {
  return {
    async next() {
      const read = await events.next();
      const decoded = read.messages.flatMap((m) => m.events);
      return { events: read.done ? [...decoded, ...events.end()] : decoded, done: read.done };
    },
    cancel: events.cancel,
    release: events.release,
  };
}

/** Any upstream whose events are translated into another wire format (or come as canonical events). */
export function translated(
  upstream: StartedStream,
  format: ClientFormat,
  ctx: EncodeContext,
  tap: OutcomeTap,
  send: Send,
  idleMs?: number,
): StreamEngine {
  const encoder = format.encoder(ctx);
  const emit = encodeInto(tap, encoder, send);
  const finish = async (events: StreamEvent[]): Promise<Step> => {
    const text = (await emit(events)) + encoder.end().join('');
    await tap.end();
    return { text, done: true };
  };
  const source =
    upstream.kind === 'canonical' ? canonicalSource(upstream.events, idleMs) : decodedSource(upstream.events);
  return {
    async next(): Promise<Step> {
      let read: Awaited<ReturnType<EventSource['next']>>;
      try {
        read = await source.next();
      } catch (err) {
        return finish([readFailure(err)]);
      }
      if (read.done) return finish(read.events);
      const ending = endsStream(read.events);
      if (!ending) return { text: await emit(read.events), done: false };
      // The upstream's finish (its `[DONE]`, `message_stop`) or error ends the client's stream now,
      // not when the upstream's body ends, which may come later or not at all.
      const step = await finish(read.events);
      if (ending === 'finish') source.release();
      else await source.cancel();
      return step;
    },
    fail: async (err: unknown) => {
      await source.cancel(err);
      return finish([passFailure(err)]);
    },
    cancel: source.cancel,
  };
}
