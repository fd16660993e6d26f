import type { StreamEvent } from '../../translators/canonical/index.ts';
import { parseSseBytes } from '../../translators/shared/sse.ts';
import type { LlmStream, ModelRef } from '../../providers/types.ts';
import type { ClientFormat, EncodeContext } from './client-format.ts';
import type { OutcomeTap } from './outcome-tap.ts';
import { upstreamDecoder } from './upstream-decoders.ts';

const encoder = new TextEncoder();

/**
 * A source of canonical events that never errors: a read failure (connection reset, abort)
 * becomes one canonical `error` event, so the client's encoder can end the stream with its
 * format's error event instead of the connection just dropping.
 */
function guarded(source: ReadableStream<StreamEvent>): ReadableStream<StreamEvent> {
  const reader = source.getReader();
  return new ReadableStream<StreamEvent>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.enqueue({ type: 'error', error: { code: 'upstream_stream_failed', message: `upstream stream failed: ${(err as Error).message}` } });
        controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function translated(upstream: LlmStream, model: ModelRef, format: ClientFormat, ctx: EncodeContext, tap: OutcomeTap): ReadableStream<string> {
  const events =
    upstream.kind === 'canonical' ? upstream.events : parseSseBytes(upstream.body).pipeThrough(upstreamDecoder(upstream.format, model.id));
  return guarded(events).pipeThrough(tap.transform()).pipeThrough(format.createEncoder(ctx));
}

/**
 * Same format on both sides: upstream events go to the client as they are (model renamed), while
 * a tee feeds the canonical decoder only to learn usage and the ending for billing.
 */
function passedThrough(upstream: Extract<LlmStream, { kind: 'wire' }>, model: ModelRef, format: ClientFormat, ctx: EncodeContext, tap: OutcomeTap): ReadableStream<string> {
  const rules = format.passthrough?.rules;
  if (!rules) throw new Error(`${format.name} has no passthrough rules`);
  const [forBilling, forClient] = parseSseBytes(upstream.body).tee();
  const billing = guarded(forBilling.pipeThrough(upstreamDecoder(upstream.format, model.id))).pipeThrough(tap.transform());
  void billing.pipeTo(new WritableStream()).catch(() => undefined);

  const passCtx = { gatewayModel: model.id, includeUsage: ctx.decoded.includeUsage };
  const reader = forClient.getReader();
  let ended = false;
  return new ReadableStream<string>({
    async pull(controller) {
      if (ended) return controller.close();
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        ended = true;
        controller.enqueue(rules.errorEvent('upstream_stream_failed', `upstream stream failed: ${(err as Error).message}`));
        return controller.close();
      }
      if (next.done) {
        ended = true;
        controller.enqueue(rules.errorEvent('stream_truncated', 'upstream stream ended before it finished'));
        return controller.close();
      }
      const kind = rules.classify(next.value);
      if (kind === 'garbage') {
        ended = true;
        await reader.cancel();
        controller.enqueue(rules.errorEvent('invalid_upstream_stream', 'upstream sent an invalid stream event'));
        return controller.close();
      }
      const text = rules.forward(next.value, passCtx);
      if (text !== null) controller.enqueue(text);
      if (kind === 'terminal' || kind === 'error') {
        ended = true;
        await reader.cancel().catch(() => undefined);
        controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * The bytes a streaming client receives. Cancelling it (client gone) aborts the upstream call
 * and settles the outcome with what was produced.
 */
export function clientStream(opts: {
  upstream: LlmStream;
  model: ModelRef;
  format: ClientFormat;
  ctx: EncodeContext;
  tap: OutcomeTap;
  abort: AbortController;
}): ReadableStream<Uint8Array> {
  const { upstream, format } = opts;
  const text =
    upstream.kind === 'wire' && format.passthrough?.format === upstream.format
      ? passedThrough(upstream, opts.model, format, opts.ctx, opts.tap)
      : translated(upstream, opts.model, format, opts.ctx, opts.tap);
  const reader = text.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel(reason) {
      opts.tap.cancelled();
      opts.abort.abort(reason);
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
