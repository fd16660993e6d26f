import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { StreamEvent, TranslationWarning } from '../../translators/canonical/index.ts';
import type { LlmStream, UpstreamStreamFormat } from '../../providers/types.ts';
import { parseJsonData, type ParsedMessage } from '../../translators/common/sse.ts';
import { upstreamDecoder } from './upstream-decoders.ts';

/** A read that waited longer than the provider's `stream_idle_timeout_ms` (the upstream is cancelled). */
export class IdleTimeout extends Error {}

/**
 * One read that must complete within `idleMs`: a stalled upstream is cancelled and the read
 * fails with IdleTimeout. Undefined or 0: no limit.
 */
export function readWithin<T>(reader: ReadableStreamDefaultReader<T>, idleMs: number | undefined) {
  if (!idleMs) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new IdleTimeout(`upstream sent nothing for ${idleMs} ms`);
      // Rejected before the cancel settles the pending read, so the race reports the timeout.
      reject(err);
      reader.cancel(err).catch(() => undefined);
    }, idleMs);
  });
  return Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
}

type ReadResult<T> = Awaited<ReturnType<ReadableStreamDefaultReader<T>['read']>>;

/** Reads that fail with IdleTimeout once one has waited `idleMs` for the upstream (see `idleWatch`). */
export interface IdleWatchedReader<T> {
  /** The next read; the last one (`done`) also ends the watch. */
  read(): Promise<ReadResult<T>>;
  /** Gives the stream up: the watch ends and the upstream is cancelled (never rejects). */
  cancel(reason?: unknown): Promise<void>;
  /** The consumer has what it needs: the rest of the body is read in the background (`drainRest`). */
  release(): void;
}

/** How long, and how many reads, a released stream's rest may take before it is cancelled. */
const RELEASE_WITHIN_MS = 2_000;
const RELEASE_MAX_READS = 16;

/**
 * Reads what is left of a body whose consumer has had its last event (`[DONE]`, `message_stop`):
 * usually only the chunked terminator, which an upstream often writes a moment later. Cancelling
 * instead would close the keep-alive connection whenever that terminator had not yet arrived, and
 * the next call would pay a new connection (a TLS handshake to a real provider). A rest that runs
 * past `RELEASE_WITHIN_MS` or `RELEASE_MAX_READS` is cancelled after all. Never rejects.
 */
export async function drainRest<T>(
  reader: ReadableStreamDefaultReader<T>,
  withinMs = RELEASE_WITHIN_MS,
  maxReads = RELEASE_MAX_READS,
): Promise<void> {
  const giveUp = (why: string) => reader.cancel(new Error(`the upstream body's rest ${why}`)).catch(() => undefined);
  const timer = setTimeout(() => void giveUp(`did not end within ${withinMs} ms`), withinMs);
  try {
    for (let reads = 0; ; reads++) {
      if (reads === maxReads) return void (await giveUp(`went on past ${maxReads} reads`));
      if ((await reader.read()).done) return;
    }
  } catch {
    // a rest that fails is as good as a cancelled one
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `readWithin` for every read of one stream, without a timer and a race per read (one per
 * upstream event on a real LLM stream): one timer, armed by the first read, looks when it fires
 * whether a read has been waiting `idleMs` and re-arms for the rest of the wait if one is pending.
 * Only time spent waiting on the upstream counts, as with `readWithin`: not the time between
 * reads, when the client's own pace holds the next read back. Undefined or 0: no limit.
 */
export function idleWatch<T>(reader: ReadableStreamDefaultReader<T>, idleMs: number | undefined): IdleWatchedReader<T> {
  const cancelUpstream = (reason?: unknown) => reader.cancel(reason).catch(() => undefined);
  const release = () => void drainRest(reader);
  if (!idleMs) return { read: () => reader.read(), cancel: cancelUpstream, release };
  /** When the pending read began (performance.now()); -1 while none is pending. */
  let pendingSince = -1;
  let timedOut: IdleTimeout | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    timer = undefined;
    if (pendingSince < 0) return; // no read waits; the next one arms the timer again
    const waited = performance.now() - pendingSince;
    if (waited < idleMs) {
      timer = setTimeout(check, idleMs - waited);
      return;
    }
    timedOut = new IdleTimeout(`upstream sent nothing for ${idleMs} ms`);
    void cancelUpstream(timedOut);
  };
  const stop = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    pendingSince = -1;
  };
  return {
    async read() {
      if (timedOut) throw timedOut;
      pendingSince = performance.now();
      timer ??= setTimeout(check, idleMs);
      let read: ReadResult<T>;
      try {
        read = await reader.read();
      } finally {
        pendingSince = -1;
      }
      // Cancelled by the watch, the pending read ends as `done`: it is the timeout.
      if (timedOut) throw timedOut;
      if (read.done) stop();
      return read;
    },
    cancel(reason) {
      stop();
      return cancelUpstream(reason);
    },
    release() {
      stop();
      release();
    },
  };
}

/** One SSE message of an upstream stream, and the canonical events it decoded to. */
export interface DecodedMessage {
  message: ParsedMessage;
  events: StreamEvent[];
}

/** One upstream read: the messages it completed, decoded; `done` once the upstream has ended. */
export interface DecodedRead {
  messages: DecodedMessage[];
  done: boolean;
}

/**
 * An upstream's SSE body, read, parsed (eventsource-parser) and decoded (its format's decoder) once
 * per message, for both the first-event check and the client stream: the check's reads are put
 * back (`unread`) and come out of `next` again, already decoded, so the stream never parses or
 * decodes them a second time and reads the upstream's own reader, not a copy of it.
 */
export interface UpstreamEvents {
  next(): Promise<DecodedRead>;
  /** Puts a read back in front of the next ones. */
  unread(read: DecodedRead): void;
  /** The decoder's closing events (a finish held for usage, a truncation), after the last message. */
  end(): StreamEvent[];
  cancel(reason?: unknown): Promise<void>;
  /** After the stream's healthy end: the body's rest is read in the background, keeping the connection. */
  release(): void;
}

/** An upstream stream whose first event has arrived (first-event.ts): what the client stream reads. */
export type StartedStream =
  | Extract<LlmStream, { kind: 'canonical' }>
  | { kind: 'decoded'; format: UpstreamStreamFormat; events: UpstreamEvents; warnings: TranslationWarning[] };

/**
 * Most bytes an upstream may send without completing an event. The parser holds an unfinished
 * event whole; an upstream writing an endless line (broken, or hostile) would take the process's
 * memory and every account's calls with it. The largest real events are a Responses stream's
 * last one, the whole response, and its base64 images.
 */
export const MAX_UPSTREAM_EVENT_BYTES = 32 * 1024 * 1024;

/** An upstream event went past `MAX_UPSTREAM_EVENT_BYTES` (the upstream is cancelled). */
export class UpstreamEventTooLarge extends Error {}

export function upstreamEvents(
  body: ReadableStream<Uint8Array>,
  format: UpstreamStreamFormat,
  model: string,
  idleMs?: number,
  maxEventBytes = MAX_UPSTREAM_EVENT_BYTES,
  passedThrough = false,
): UpstreamEvents {
  const reader = idleWatch(body.getReader(), idleMs);
  const text = new TextDecoder();
  const decoder = upstreamDecoder(format, model, passedThrough);
  let parsed: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => parsed.push(message) });
  const backlog: DecodedRead[] = [];
  /** Bytes read since the last read that completed an event (that read's tail uncounted: one read at most). */
  let unfinished = 0;
  return {
    async next() {
      const put = backlog.shift();
      if (put) return put;
      const { done, value } = await reader.read();
      if (done) parser.reset({ consume: true });
      else parser.feed(text.decode(value, { stream: true }));
      const complete = parsed;
      parsed = [];
      if (complete.length) unfinished = 0;
      else if (!done) unfinished += value.byteLength;
      if (unfinished > maxEventBytes) {
        const err = new UpstreamEventTooLarge(`upstream sent more than ${maxEventBytes} bytes without ending an event`);
        await reader.cancel(err);
        throw err;
      }
      // Parsed here once for the decoder and the passthrough classifier alike (`ParsedMessage`).
      const messages = complete.map((raw) => {
        // The parser's own message object gains its parse (no copy: it is ours, and this runs per event).
        if (raw.data !== '' && raw.data !== '[DONE]') (raw as { json?: unknown }).json = parseJsonData(raw.data);
        const message: ParsedMessage = raw;
        return { message, events: decoder.push(message) };
      });
      return { messages, done };
    },
    unread(read) {
      backlog.unshift(read);
    },
    end: () => decoder.end(),
    cancel: reader.cancel,
    release: reader.release,
  };
}
