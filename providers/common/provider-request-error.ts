/**
 * A provider refusing a request — the client's input (422) or an upstream that cannot serve it
 * (502) — with the HTTP status it deserves. Providers never build HTTP responses: src/http renders
 * this in the error shape of the endpoint that was called.
 */
export class ProviderRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderRequestError';
  }
}

/** The client's input cannot be used: a 422 naming the field in its message. */
export const invalidProviderInput = (message: string) => new ProviderRequestError(422, message);
