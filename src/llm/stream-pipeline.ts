import type { PassthroughRules } from '../../translators/passthrough/index.ts';
import type { ClientFormat, EncodeContext } from './client-format.ts';
import type { OutcomeTap } from './outcome-tap.ts';
import { passedThrough } from './passed-through-stream.ts';
import { passFailure, type Send, type Step, type StreamEngine } from './stream-step.ts';
import { translated } from './translated-stream.ts';
import type { StartedStream } from './upstream-events.ts';

const utf8 = new TextEncoder();

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
  const engine: StreamEngine =
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
