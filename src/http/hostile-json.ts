/**
 * What Postgres cannot hold, and what the gateway refuses, in client-sent JSON.
 *
 * Postgres `text` and `jsonb` reject the NUL character (SQLSTATE 22P05) and unpaired UTF-16
 * surrogates (22P02), and `jsonb` input recurses once per nesting level. A value carrying any of
 * them must never reach a write unchanged, or the write fails — and with it every other row of the
 * same batch. Two remedies, chosen per field:
 * - refuse at the edge with a 4xx naming the field (`findUnstorableString`): ids, names, task inputs;
 * - store a replacement (`toStorable`): LLM message content, which still goes to the upstream as sent.
 */

/** Deepest JSON nesting a request body may have; deeper bodies are refused before any work. */
export const MAX_JSON_DEPTH = 64;

/** NUL, or a surrogate half that is not part of a pair. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what Postgres cannot store
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableString(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** Why a string cannot be stored, for a 4xx message. */
export function unstorableReason(text: string): string {
  return text.includes('\u0000') ? 'must not contain the NUL character' : 'must be valid Unicode (unpaired surrogate)';
}

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * The path of the first string (value or object key) Postgres could not store, e.g.
 * `input.prompt`, or undefined when every string is storable. Also refuses nesting deeper than
 * `MAX_JSON_DEPTH` (reported as the path where it goes too deep).
 */
export function findUnstorableString(
  value: unknown,
  path = '',
  depth = 0,
): { path: string; reason: string } | undefined {
  if (typeof value === 'string') return isStorableString(value) ? undefined : { path, reason: unstorableReason(value) };
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_JSON_DEPTH) return { path, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findUnstorableString(value[i], child(path, i), depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!isStorableString(key))
      return { path: child(path, key.replace(UNSTORABLE, '?')), reason: `key ${unstorableReason(key)}` };
    const bad = findUnstorableString(item, child(path, key), depth + 1);
    if (bad) return bad;
  }
  return undefined;
}

/** The string as Postgres can store it: NUL and unpaired surrogates become U+FFFD. */
export function storableString(text: string): string {
  if (isStorableString(text)) return text;
  return text.toWellFormed().replaceAll('\u0000', '\uFFFD');
}

/**
 * A copy of a JSON value that Postgres can store: every string and key made storable, and
 * anything nested deeper than `MAX_JSON_DEPTH` replaced by a marker string. Returns the value
 * itself when nothing needed changing (the common case allocates nothing).
 */
export function toStorable(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return storableString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) return '[nested too deep]';
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = toStorable(value[i], depth + 1);
      if (item === value[i]) continue;
      out ??= value.slice();
      out[i] = item;
    }
    return out ?? value;
  }
  let changed = false;
  const entries = Object.entries(value).map(([key, item]) => {
    const k = storableString(key);
    const v = toStorable(item, depth + 1);
    if (k !== key || v !== item) changed = true;
    return [k, v] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}
