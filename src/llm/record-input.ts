const MAX_STRING = 4096;

/**
 * The request as submitted, for the task record — with very long strings (base64 images, huge
 * documents) cut to their first 4 KiB and marked, so one call cannot bloat the tasks table.
 */
export function recordableInput(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…[${value.length - MAX_STRING} more characters]` : value;
  }
  if (Array.isArray(value)) return value.map(recordableInput);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, recordableInput(v)]));
  }
  return value;
}
