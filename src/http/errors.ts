/**
 * Every error the gateway answers with is an HttpError that knows its own body shape: the
 * envelope by default, the OpenAI-style shape of the model endpoints, or a wire format's own shape
 * on the LLM routes. One `onError` renders them all.
 */
export abstract class HttpError extends Error {
  abstract readonly status: number;
  headers: Record<string, string> = {};
  abstract body(): unknown;
}

/** `{success: false, code, data: {message}}` */
export class EnvelopeError extends HttpError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'EnvelopeError';
  }
  body() {
    return { success: false, code: this.status, data: { message: this.message } };
  }
}

export const badRequest = (message: string) => new EnvelopeError(400, message);
export const unauthorized = (message = 'invalid or missing API key') => new EnvelopeError(401, message);
export const insufficientBalance = () => new EnvelopeError(402, 'insufficient balance');
export const forbidden = (message: string) => new EnvelopeError(403, message);
export const notFound = (message: string) => new EnvelopeError(404, message);
export const conflict = (message: string) => new EnvelopeError(409, message);
export const payloadTooLarge = (message: string) => new EnvelopeError(413, message);
export const unprocessable = (message: string) => new EnvelopeError(422, message);

export function tooManyRequests(message: string, retryAfterSeconds: number): EnvelopeError {
  const err = new EnvelopeError(429, message);
  err.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  return err;
}

/** The model endpoints' OpenAI-style `{error: {message, type, code}}`. */
export class OpenAIStyleError extends HttpError {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly type = 'invalid_request_error',
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'OpenAIStyleError';
  }
  body() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}
