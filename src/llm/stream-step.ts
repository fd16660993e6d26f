import type { StreamEvent } from '../../translators/canonical/index.ts';

/** One step of a client stream: the text to send for one upstream read, and whether it was the last. */
export type Step = { text: string; done: boolean };

/** Sends text to the client ahead of the step that is being computed. */
export type Send = (text: string) => void;

/**
 * How a client stream is made (translated-stream.ts, passed-through-stream.ts): the next step for
 * one upstream read, the ending for a step that threw, and cancellation (the client left).
 */
export interface StreamEngine {
  next(): Promise<Step>;
  fail(err: unknown): Promise<Step>;
  cancel(reason?: unknown): Promise<void>;
}

/** An upstream read that failed (a cut connection, an idle limit): the stream ends with the format's error event. */
export const readFailure = (err: unknown): StreamEvent => ({
  type: 'error',
  error: { code: 'upstream_stream_failed', message: `upstream stream failed: ${(err as Error).message}` },
});

/**
 * An event the gateway could not pass on or encode (one nested deeper than `JSON.stringify`
 * goes, say): the stream ends with the format's error event and the call settles as failed.
 */
export const passFailure = (err: unknown): Extract<StreamEvent, { type: 'error' }> => ({
  type: 'error',
  error: {
    code: 'invalid_upstream_stream',
    message: `upstream sent a stream event the gateway could not pass on: ${(err as Error).message ?? String(err)}`,
  },
});
