import { MAX_JSON_DEPTH, isStorableString, storableString } from '../http/hostile-json.ts';

const MAX_STRING = 4096;
/**
 * About the most JSON a call's record keeps of its request (characters). A request can be 32 MiB
 * of messages each under `MAX_STRING`; its record is written by the settlement statement that
 * other accounts' calls share and wait for (docs/money.md) — a 236 KB conversation took that
 * statement 9–12 ms with lz4 on the benchmark VM (bench/README.md) — and it stays in `tasks`.
 */
export const MAX_RECORDED_CHARS = 256 * 1024;
/** Top-level settings a request past `MAX_RECORDED_CHARS` keeps: the first this many, each this short. */
const KEPT_SETTINGS = 64;
const KEPT_SETTING_CHARS = 256;

/**
 * The request as submitted, for the task record — with very long strings (base64 images, huge
 * documents) cut to their first 4 KiB and marked, so one call cannot bloat the tasks table, and
 * in a form Postgres can store (NUL and unpaired surrogates replaced; the upstream got them as sent).
 * A request whose record would still be larger than `MAX_RECORDED_CHARS` keeps only its top-level
 * settings (`model`, `max_tokens`, `stream`…) and a `not_recorded` note saying how large it was.
 * Runs on every LLM call: a request with nothing to change (nearly all) is kept as it is, and only
 * the parts that change are copied. Nothing changes the request afterwards, so sharing it is safe.
 */
export function recordableInput(value: unknown): unknown {
  const size = recordedSize(value, 0, 0);
  return size > MAX_RECORDED_CHARS ? settingsOnly(value, size) : storable(value, 0);
}

function storable(value: unknown, depth: number): unknown {
  return needsChange(value, depth) ? changed(value, depth) : value;
}

/**
 * About how many characters of JSON the record of `value` takes, strings counted as cut; stops
 * counting once past `MAX_RECORDED_CHARS` (one walk of the structure, no string read).
 */
function recordedSize(value: unknown, depth: number, total: number): number {
  if (typeof value === 'string') return total + Math.min(value.length, MAX_STRING + 32) + 2;
  if (value === null || typeof value !== 'object') return total + 5;
  if (depth >= MAX_JSON_DEPTH) return total + 20;
  let size = total + 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      size = recordedSize(item, depth + 1, size + 1);
      if (size > MAX_RECORDED_CHARS) return size;
    }
    return size;
  }
  for (const key in value) {
    size = recordedSize(
      (value as Record<string, unknown>)[key],
      depth + 1,
      size + Math.min(key.length, MAX_STRING) + 4,
    );
    if (size > MAX_RECORDED_CHARS) return size;
  }
  return size;
}

/** The record of a request past `MAX_RECORDED_CHARS`: its short top-level settings and a note. */
function settingsOnly(value: unknown, size: number): unknown {
  const note = `request not recorded: more than ${size.toLocaleString('en-US')} characters, past the ${MAX_RECORDED_CHARS / 1024} KiB a call's record keeps`;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { not_recorded: note };
  // Entries, not assignments: a `__proto__` key is a field of the request, not a prototype.
  const kept: Array<[string, unknown]> = [];
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    const short =
      typeof v === 'string'
        ? v.length <= KEPT_SETTING_CHARS
        : typeof v === 'number' || typeof v === 'boolean' || v === null;
    if (!short || key.length > KEPT_SETTING_CHARS) continue;
    kept.push([storableString(key), typeof v === 'string' ? storableString(v) : v]);
    if (kept.length === KEPT_SETTINGS) break;
  }
  return Object.fromEntries([...kept, ['not_recorded', note]]);
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
  if (Array.isArray(value)) return value.map((item) => storable(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableString(k), storable(v, depth + 1)]));
}
