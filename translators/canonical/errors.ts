import type { StreamEvent } from './stream.ts';

/**
 * Thrown by request decoders when the client's body is not valid for its wire format. `param`
 * names the field (`messages[0].content[1].image_url`), and each route renders it in its
 * format's own error shape.
 */
export class InvalidRequestError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'InvalidRequestError';
  }
}

/**
 * Thrown inside an upstream stream decoder when the upstream breaks its own format's event
 * grammar (a block started twice, a delta for a block that never started, data that is not an
 * event). It never leaves the decoder: `invalidUpstreamStream` turns it into the one canonical
 * error that ends the stream.
 */
export class UpstreamStreamError extends Error {
  override name = 'UpstreamStreamError';
}

/** An UpstreamStreamError → the `invalid_upstream_stream` error event; anything else is a bug and is rethrown. */
export function invalidUpstreamStream(err: unknown): StreamEvent {
  if (!(err instanceof UpstreamStreamError)) throw err;
  return { type: 'error', error: { code: 'invalid_upstream_stream', message: err.message } };
}
