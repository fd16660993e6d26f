/** Longest client-given request id the gateway keeps. */
const MAX_LENGTH = 128;
/** Printable ASCII only (space excluded): safe in a header, a log line and a database column. */
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * The request id of a call: the client's own `x-request-id` when it is 1–128 printable ASCII
 * characters, else a fresh one (`req_` + 32 hex digits). A rejected client id is not an error:
 * the request goes on under the new id, which the response tells.
 */
export function requestIdFor(headerValue: string | null): string {
  if (headerValue !== null && headerValue.length <= MAX_LENGTH && PRINTABLE.test(headerValue)) return headerValue;
  return `req_${crypto.randomUUID().replaceAll('-', '')}`;
}
