import { MAX_JSON_DEPTH, storableString } from '../http/hostile-json.ts';

const MAX_STRING = 4096;

/**
 * The request as submitted, for the task record — with very long strings (base64 images, huge
 * documents) cut to their first 4 KiB and marked, so one call cannot bloat the tasks table, and
 * in a form Postgres can store (NUL and unpaired surrogates replaced; the upstream got them as sent).
 */
export function recordableInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const text =
      value.length > MAX_STRING
        ? `${value.slice(0, MAX_STRING).toWellFormed()}…[${value.length - MAX_STRING} more characters]`
        : value;
    return storableString(text);
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((item) => recordableInput(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableString(k), recordableInput(v, depth + 1)]));
}
