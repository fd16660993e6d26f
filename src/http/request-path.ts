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
