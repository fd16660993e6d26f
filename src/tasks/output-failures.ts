import { FetchLimitError, UnsafeUrlError } from '../net/net-errors.ts';
import { FileTooLargeError } from '../storage/byte-limit.ts';

/**
 * An output that cannot be stored whatever is tried again: its URL answered 4xx, points at a
 * private address, or is larger than the gateway keeps. The task fails (and is refunded) instead
 * of stepping again until its deadline.
 */
export class OutputRefused extends Error {
  override name = 'OutputRefused';
}

/**
 * Whether an output's failure to be stored is final: OutputRefused, the SSRF guard (not a name
 * that did not resolve this time), the size cap (as the download or the store met it).
 */
export function isFinalOutputFailure(err: unknown): boolean {
  return (
    err instanceof OutputRefused ||
    (err instanceof UnsafeUrlError && err.reason !== 'unresolvable') ||
    err instanceof FileTooLargeError ||
    (err instanceof FetchLimitError && err.limit === 'size')
  );
}
