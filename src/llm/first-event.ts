import type { LlmStream } from '../../providers/types.ts';
import type { StreamEvent } from '../../translators/canonical/index.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import { type DecodedRead, IdleTimeout, readWithin, type StartedStream, upstreamEvents } from './upstream-events.ts';

/**
 * Waits for a stream's first event before the client is answered, so that an upstream that says
 * 200 and then fails at once — an error event first (overloaded servers do this), a reset, an
 * empty body, silence — is still a failure before the first byte and can fail over
 * (docs/routing.md). What was read is handed on, decoded once (upstream-events.ts): the returned
 * stream starts with it.
 */
export async function awaitFirstEvent(
  stream: LlmStream,
  model: string,
  idleMs: number,
  /** The client gets the upstream's events as they are (its own format). */
  passedThrough = false,
): Promise<StartedStream> {
  if (stream.kind === 'canonical') {
    const reader = stream.events.getReader();
    const first = await readOrFail(reader, idleMs);
    if (first.done) throw new UpstreamError('server_error', 'upstream stream ended before its first event');
    if (first.value.type === 'error') {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamError('server_error', `upstream stream failed at once: ${first.value.error.message}`);
    }
    return { ...stream, events: prepend([first.value], reader) };
  }
  // The reads taken here are decoded once and put back: the client stream starts with them.
  const events = upstreamEvents(stream.body, stream.format, model, idleMs, undefined, passedThrough);
  const taken: DecodedRead[] = [];
  for (;;) {
    let read: DecodedRead;
    try {
      read = await events.next();
    } catch (err) {
      throw beforeFirstEvent(err);
    }
    if (read.done) throw new UpstreamError('server_error', 'upstream stream ended before its first event');
    taken.push(read);
    const decoded = read.messages.flatMap((m) => m.events);
    const at = decoded.findIndex((e) => e.type === 'error');
    const failure = decoded[at];
    // Failed at once, and asked of the next deployment, unless the upstream reported usage before
    // the error in that same read: then its answer (or its billed tool calls) is done and billed
    // upstream, and goes to the client, charged, as a stream that breaks later does; asking
    // another deployment would pay for it twice and charge for neither.
    if (failure?.type === 'error' && !reportedUsage(decoded.slice(0, at))) {
      await events.cancel();
      throw new UpstreamError('server_error', `upstream stream failed at once: ${failure.error.message}`);
    }
    if (decoded.length) {
      for (const back of taken.reverse()) events.unread(back);
      return { kind: 'decoded', format: stream.format, events, warnings: stream.warnings };
    }
  }
}

/**
 * Whether any of `events` reports the tokens of an answer (the decoders pass usage on as it
 * comes): a finish, or output tokens counted. A built-in tool's call counted as it starts, or an
 * input-only report, is no answer yet.
 */
function reportedUsage(events: StreamEvent[]): boolean {
  return events.some(
    (event) => event.type === 'finish' || (event.type === 'usage' && (event.usage.outputTokens ?? 0) > 0),
  );
}

/** A failed or silent read before the first event, as the failure routing fails over. */
function beforeFirstEvent(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof IdleTimeout) return new UpstreamError('timeout', err.message);
  return new UpstreamError('unreachable', `upstream stream failed before its first event: ${(err as Error).message}`);
}

/** A read that fails after `idleMs` of silence (the upstream is then cancelled). */
async function readOrFail<T>(reader: ReadableStreamDefaultReader<T>, idleMs: number) {
  try {
    return await readWithin(reader, idleMs);
  } catch (err) {
    throw beforeFirstEvent(err);
  }
}

/** What was already read, then the rest of the reader; cancelling it cancels the upstream. */
function prepend<T>(head: T[], reader: ReadableStreamDefaultReader<T>): ReadableStream<T> {
  let next = 0;
  return new ReadableStream<T>({
    async pull(controller) {
      if (next < head.length) {
        controller.enqueue(head[next++] as T);
        return;
      }
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(err);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
