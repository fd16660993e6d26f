import type { Category } from '../catalog/model-object.ts';
import type { RoutingTable } from './routing-table.ts';

/** A request header the caller got wrong: the endpoint answers 400 in its own shape, naming it. */
export class RoutingHeaderError extends Error {
  override name = 'RoutingHeaderError';
  constructor(
    readonly header: string,
    message: string,
  ) {
    super(`${header}: ${message}`);
  }
}

const MAX_FALLBACKS = 16;
const MAX_TTL_S = 2_592_000;

/**
 * `x-gateway-fallbacks: a/b,c/d` replaces the model's fallbacks for one request; an empty value
 * means none. Every id must be a catalog model of the requested model's category.
 */
export function parseFallbacksHeader(
  value: string | null,
  table: RoutingTable,
  category: Category,
): string[] | undefined {
  if (value === null) return undefined;
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length > MAX_FALLBACKS)
    throw new RoutingHeaderError('x-gateway-fallbacks', `at most ${MAX_FALLBACKS} models`);
  for (const id of ids) {
    const entry = table.has(id);
    if (!entry) throw new RoutingHeaderError('x-gateway-fallbacks', `unknown model "${id.slice(0, 100)}"`);
    if (entry.object.category !== category)
      throw new RoutingHeaderError('x-gateway-fallbacks', `"${id}" is a ${entry.object.category} model`);
  }
  return ids;
}

/** How the exact response cache applies to one call: `ttlS` 0 means not at all. */
export interface CacheDirective {
  ttlS: number;
}

/**
 * `x-gateway-cache: ttl=<seconds>` or `no-store`; without the header the model's `cache_ttl_s`
 * (default 0: off) applies.
 */
export function parseCacheHeader(value: string | null, modelTtlS: number | undefined): CacheDirective {
  if (value === null) return { ttlS: modelTtlS ?? 0 };
  const text = value.trim().toLowerCase();
  if (text === 'no-store') return { ttlS: 0 };
  const match = /^ttl=(\d{1,8})$/.exec(text);
  const ttl = match ? Number(match[1]) : Number.NaN;
  if (!Number.isInteger(ttl) || ttl > MAX_TTL_S)
    throw new RoutingHeaderError('x-gateway-cache', `expected ttl=<seconds, 0 to ${MAX_TTL_S}> or no-store`);
  return { ttlS: ttl };
}
