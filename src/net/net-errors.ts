import { EnvelopeError } from '../http/errors.ts';

/**
 * Errors of outbound fetches of user-given URLs. Both are EnvelopeErrors so a route that lets
 * one through answers with a clear envelope; background callers (webhooks, task outputs) catch
 * them by class and record `message`, which always starts with the URL's field name.
 */
export type UnsafeUrlReason = 'invalid_url' | 'scheme' | 'credentials' | 'unresolvable' | 'blocked_address';

/** The URL may not be fetched at all (bad form, or it points into a private network). */
export class UnsafeUrlError extends EnvelopeError {
  constructor(
    readonly reason: UnsafeUrlReason,
    message: string,
    /** The offending address, when the reason is one. */
    readonly address?: string,
  ) {
    super(422, message);
    this.name = 'UnsafeUrlError';
  }
}

export type FetchLimit = 'size' | 'timeout' | 'redirects';

/** The fetch went past one of its limits: too many bytes, too long, too many redirects. */
export class FetchLimitError extends EnvelopeError {
  constructor(
    readonly limit: FetchLimit,
    message: string,
  ) {
    super(limit === 'size' ? 413 : 422, message);
    this.name = 'FetchLimitError';
  }
}
