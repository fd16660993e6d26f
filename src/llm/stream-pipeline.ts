import type { StreamEvent } from '../../translators/canonical/index.ts';
import { createChatChunkRepair, type PassthroughRules } from '../../translators/passthrough/index.ts';
import type { StreamTranslator } from '../../translators/shared/stream-translator.ts';
import { passthroughContext, type ClientFormat, type EncodeContext } from './client-format.ts';
import type { OutcomeTap } from './outcome-tap.ts';
import { idleWatch, type StartedStream, type UpstreamEvents } from './upstream-events.ts';

const utf8 = new TextEncoder();

/** One step of a client stream: the text to send for one upstream read, and whether it was the last. */
type Step = { text: string; done: boolean };

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

/** Sends text to the client ahead of the step that is being computed. */
type Send = (text: string) => void;

const readFailure = (err: unknown): StreamEvent => ({
  type: 'error',
  error: { code: 'upstream_stream_failed', message: `upstream stream failed: ${(err as Error).message}` },
});

/**
 * An event the gateway could not pass on or encode (one nested deeper than `JSON.stringify`
 * goes, say): the stream ends with the format's error event and the call settles as failed.
 */
const passFailure = (err: unknown): Extract<StreamEvent, { type: 'error' }> => ({
  type: 'error',
  error: {
    code: 'invalid_upstream_stream',
    message: `upstream sent a stream event the gateway could not pass on: ${(err as Error).message ?? String(err)}`,
  },
});

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
function translated(
  upstream: StartedStream,
  format: ClientFormat,
  ctx: EncodeContext,
  tap: OutcomeTap,
  send: Send,
  idleMs?: number,
) {
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

/**
 * Same format on both sides: upstream events go to the client as they are (model renamed), while
 * the canonical decoder reads the same messages only to learn usage and the ending for billing.
 */
function passedThrough(
  upstream: Extract<StartedStream, { kind: 'decoded' }>,
  rules: PassthroughRules,
  ctx: EncodeContext,
  tap: OutcomeTap,
  send: Send,
  keepFinal?: (response: Record<string, unknown>) => void,
) {
  // Each message comes decoded once (for billing) beside its text (for the client); `classify` reads the text.
  const source = upstream.events;
  // A chat stream's repair state is its own: one per stream.
  const passCtx = { ...passthroughContext(ctx), chatRepair: createChatChunkRepair() };
  /** Passes the closing events through the tap, waiting for whatever charge they commit. */
  const observe = async (events: StreamEvent[]) => {
    for (const event of events) {
      const waiting = tap.accept(event);
      if (waiting) await waiting;
    }
  };
  /** The id the client's events get when the upstream sent none (fill-missing-id.ts): the record's. */
  let fill: string | undefined;
  /** `healthy`: the upstream's own end (`[DONE]`, `message_stop`), whose body's rest is read, not cut. */
  const end = async (text: string, tail: StreamEvent[], healthy = false): Promise<Step> => {
    // `text` ends with the stream's last event: all of it waits for the charge.
    await observe(tail);
    await tap.end();
    if (healthy) source.release();
    else await source.cancel();
    return { text, done: true };
  };
  return {
    async next(): Promise<Step> {
      let read: Awaited<ReturnType<UpstreamEvents['next']>>;
      try {
        read = await source.next();
      } catch (err) {
        return end(rules.errorEvent('upstream_stream_failed', `upstream stream failed: ${(err as Error).message}`), [
          readFailure(err),
        ]);
      }
      let text = '';
      for (const { message, events } of read.messages) {
        const kind = rules.classify(message);
        if (kind === 'garbage')
          return end(
            text + rules.errorEvent('invalid_upstream_stream', 'upstream sent an invalid stream event'),
            events,
          );
        // Inline rather than a helper: this runs per event, and an ending that waits for its
        // charge first hands what precedes it to the client.
        for (const event of events) {
          if (event.type === 'message-start' && rules.fillId?.(message, event.id) !== undefined) fill = event.id;
          const waiting = tap.accept(event);
          if (waiting) {
            if (text) send(text);
            text = '';
            await waiting;
          }
        }
        const filled = fill === undefined ? undefined : rules.fillId?.(message, fill);
        const forwarded = filled === undefined ? message : { id: message.id, event: message.event, data: filled };
        text += rules.forward(forwarded, passCtx) ?? '';
        if (kind === 'terminal') {
          // Before the finish reaches the tap, whose store step saves the object the client saw.
          const final = rules.finalObject?.(message, passCtx);
          if (final) keepFinal?.(final);
        }
        if (kind === 'terminal' || kind === 'error') return end(text, source.end(), kind === 'terminal');
      }
      if (read.done)
        return end(
          text + rules.errorEvent('stream_truncated', 'upstream stream ended before it finished'),
          source.end(),
        );
      return { text, done: false };
    },
    fail: (err: unknown) => {
      const failure = passFailure(err);
      return end(rules.errorEvent(failure.error.code, failure.error.message), [failure]);
    },
    cancel: source.cancel,
  };
}

/** The rules a stream is passed through with: an upstream of the client's own format; else undefined (translated). */
export function passthroughRulesFor(format: ClientFormat, upstream: StartedStream): PassthroughRules | undefined {
  const passthrough = format.passthrough;
  return passthrough && upstream.kind === 'decoded' && passthrough.format === upstream.format
    ? passthrough.rules
    : undefined;
}

/**
 * The bytes a streaming client receives: one pull loop per client, each upstream read decoded,
 * tapped and encoded in place, with no web-stream hop in between. Cancelling it (client gone)
 * aborts the upstream call and settles the outcome with what was produced.
 */
export function clientStream(opts: {
  /** Its first event already read (first-event.ts); a decoded upstream carries its idle limit itself. */
  upstream: StartedStream;
  format: ClientFormat;
  ctx: EncodeContext;
  tap: OutcomeTap;
  abort: AbortController;
  /** Passed through: receives the whole response object of the terminal event, when the format has one. */
  keepFinal?: (response: Record<string, unknown>) => void;
  /** Longest wait for the next event of a canonical (sandbox) source; undefined: no limit. */
  idleTimeoutMs?: number;
}): ReadableStream<Uint8Array> {
  const { upstream, format, ctx, tap } = opts;
  const rules = passthroughRulesFor(format, upstream);
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const send: Send = (text) => controller?.enqueue(utf8.encode(text));
  const engine =
    rules && upstream.kind === 'decoded'
      ? passedThrough(upstream, rules, ctx, tap, send, opts.keepFinal)
      : translated(upstream, format, ctx, tap, send, opts.idleTimeoutMs);
  let finished = false;
  /** The engine's own ending for a step that threw; should that throw too, the call still settles. */
  const failed = async (err: unknown): Promise<Step> => {
    try {
      return await engine.fail(err);
    } catch (again) {
      await tap.accept(passFailure(again));
      opts.abort.abort(again);
      return { text: '', done: true };
    }
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(controller) {
      // Keep reading until there is something to send: an upstream read may complete no event.
      while (!finished) {
        let step: Step;
        try {
          step = await engine.next();
        } catch (err) {
          // Never a cut stream and an unsettled call: the format's own error event ends it.
          step = await failed(err);
        }
        finished = step.done;
        if (step.text) controller.enqueue(utf8.encode(step.text));
        if (step.text) break;
      }
      if (finished) controller.close();
    },
    async cancel(reason) {
      tap.cancelled();
      opts.abort.abort(reason);
      await engine.cancel(reason);
    },
  });
}
