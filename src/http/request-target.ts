import { isStorableString, unstorableReason } from './hostile-json.ts';

/**
 * The request target (path and query string) checked once, for every route, before routing:
 * a value that cannot be percent-decoded as UTF-8, or decodes to something Postgres cannot hold
 * (NUL), is refused with a 4xx naming where it is — it never reaches a handler, a cache key or a
 * query. Route handlers still bound their own values (integer ids, timestamps) to their columns.
 *
 * - a path segment: 400 `path: …` (the URL names nothing that could exist);
 * - a query parameter: 422 `<name>: …`, as every other bad query value.
 */
export interface TargetProblem {
  status: 400 | 422;
  /** The parameter, or `path`. */
  field: string;
  message: string;
}

/** Longest query-parameter name shown in a message; longer ones are cut. */
const NAME_SHOWN = 64;

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** `%ff` → shown as it was sent (it is ASCII), cut to a readable length. */
const shown = (raw: string) => JSON.stringify(raw.length > NAME_SHOWN ? `${raw.slice(0, NAME_SHOWN)}…` : raw);

/** The first problem of `url`'s path or query string, or undefined when both are clean. */
export function requestTargetProblem(url: string): TargetProblem | undefined {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return undefined;
  const hash = url.indexOf('#', start);
  const end = hash === -1 ? url.length : hash;
  const mark = url.indexOf('?', start);
  const path = url.slice(start, mark === -1 || mark > end ? end : mark);
  const query = mark === -1 || mark > end ? '' : url.slice(mark + 1, end);

  // The common case (nothing encoded) costs one scan of each part.
  if (path.includes('%')) {
    for (const segment of path.split('/')) {
      if (!segment.includes('%')) continue;
      const decoded = decode(segment);
      if (decoded === undefined)
        return {
          status: 400,
          field: 'path',
          message: `path: segment ${shown(segment)} is not valid percent-encoded UTF-8`,
        };
      if (!isStorableString(decoded))
        return { status: 400, field: 'path', message: `path: segment ${shown(segment)} ${unstorableReason(decoded)}` };
    }
  }
  if (query?.includes('%')) {
    for (const pair of query.split('&')) {
      if (!pair.includes('%')) continue;
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
      const name = decode(rawName.replaceAll('+', ' '));
      if (name === undefined)
        return {
          status: 422,
          field: 'query',
          message: `query: parameter name ${shown(rawName)} is not valid percent-encoded UTF-8`,
        };
      if (!isStorableString(name))
        return {
          status: 422,
          field: 'query',
          message: `query: parameter name ${shown(rawName)} ${unstorableReason(name)}`,
        };
      const field = name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name;
      const value = decode(rawValue.replaceAll('+', ' '));
      if (value === undefined) return { status: 422, field, message: `${field}: is not valid percent-encoded UTF-8` };
      if (!isStorableString(value)) return { status: 422, field, message: `${field}: ${unstorableReason(value)}` };
    }
  }
  return undefined;
}
