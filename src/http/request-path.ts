/**
 * The path of a request's URL without building a `URL` (this runs for every request): from the
 * first `/` after the scheme's `//` to the query. Bun's `request.url` is always absolute.
 */
export function requestPath(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return '/';
  const query = url.indexOf('?', start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

/** Longest path an access log line keeps. */
export const MAX_LOGGED_PATH = 512;

/**
 * The path as an access log line keeps it: Bun takes request targets up to about 16 KiB, and an
 * unknown route answers before authentication, so a client could write 16 KiB of log per request.
 */
export function loggedPath(url: string): string {
  const path = requestPath(url);
  return path.length <= MAX_LOGGED_PATH
    ? path
    : `${path.slice(0, MAX_LOGGED_PATH)}…(+${path.length - MAX_LOGGED_PATH})`;
}
