/**
 * The success envelope (docs/api-contract.md, "Envelope"). "Empty arrays and empty objects are omitted from responses when
 * not needed": fields of `data` holding `[]` or `{}` are dropped (recursively); `data` itself is
 * always present, so an empty list still reads `data: []`.
 */
export function envelope<T>(data: T, code = 200): { success: true; code: number; data: T } {
  return { success: true, code, data: omitEmpty(data) };
}

export function omitEmpty<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => omitEmpty(item)) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const compacted = omitEmpty(item);
    if (!isEmpty(compacted)) out[key] = compacted;
  }
  return out as T;
}

function isEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (value && typeof value === 'object' && !(value instanceof Date)) return Object.keys(value).length === 0;
  return false;
}
