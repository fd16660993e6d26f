import type { StreamEvent } from '../../translators/canonical/index.ts';
import { createChatChunkRepair, type PassthroughRules } from '../../translators/passthrough/index.ts';
import { passthroughContext, type EncodeContext } from './client-format.ts';
import type { OutcomeTap } from './outcome-tap.ts';
import { passFailure, readFailure, type Send, type Step, type StreamEngine } from './stream-step.ts';
import type { StartedStream, UpstreamEvents } from './upstream-events.ts';

/**
 * Same format on both sides: upstream events go to the client as they are (model renamed), while
 * the canonical decoder reads the same messages only to learn usage and the ending for billing.
 */
export function passedThrough(
  upstream: Extract<StartedStream, { kind: 'decoded' }>,
  rules: PassthroughRules,
  ctx: EncodeContext,
  tap: OutcomeTap,
  send: Send,
  keepFinal?: (response: Record<string, unknown>) => void,
): StreamEngine {
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
