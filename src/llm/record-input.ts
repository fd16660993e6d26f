import { MAX_JSON_DEPTH, isStorableString, storableString } from '../http/hostile-json.ts';

const MAX_STRING = 4096;

/**
 * The request as submitted, for the task record — with very long strings (base64 images, huge
 * documents) cut to their first 4 KiB and marked, so one call cannot bloat the tasks table, and
 * in a form Postgres can store (NUL and unpaired surrogates replaced; the upstream got them as sent).
 * Runs on every LLM call: a request with nothing to change (nearly all) is kept as it is, and only
 * the parts that change are copied. Nothing changes the request afterwards, so sharing it is safe.
 */
export function recordableInput(value: unknown, depth = 0): unknown {
  return needsChange(value, depth) ? changed(value, depth) : value;
}

function needsChange(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.length > MAX_STRING || !isStorableString(value);
  if (value === null || typeof value !== 'object') return false;
  if (depth >= MAX_JSON_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (needsChange(item, depth + 1)) return true;
    return false;
  }
  for (const key in value)
    if (!isStorableString(key) || needsChange((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

function changed(value: unknown, depth: number): unknown {
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
