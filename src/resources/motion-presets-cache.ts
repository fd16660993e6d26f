import type { MotionPreset, MotionQuery } from '../../providers/common/resources.ts';
import type { Store } from '../store/store.ts';

/** Motion presets are cached for 30 minutes (docs/api-contract.md, "Limits"). */
export const MOTION_CACHE_MS = 30 * 60_000;

interface Cached {
  /** Clock time the presets were fetched at. */
  at: number;
  presets: MotionPreset[];
}

/**
 * Motion preset answers, cached per provider and query in the shared store so every instance
 * serves the same list for 30 minutes. Freshness is judged by the injected clock (tests move it);
 * the store's own expiry, on the real clock, only bounds memory.
 */
export class MotionPresetsCache {
  constructor(
    private readonly store: Store,
    private readonly opts: { now?: () => number; ttlMs?: number } = {},
  ) {}

  async get(
    provider: string,
    query: MotionQuery,
    load: () => MotionPreset[] | Promise<MotionPreset[]>,
  ): Promise<MotionPreset[]> {
    const now = this.opts.now ?? Date.now;
    const ttlMs = this.opts.ttlMs ?? MOTION_CACHE_MS;
    const key = cacheKey(provider, query);
    const hit = await this.store.get(key);
    if (hit) {
      const cached = JSON.parse(hit) as Cached;
      const age = now() - cached.at;
      if (age >= 0 && age < ttlMs) return cached.presets;
    }
    const presets = await load();
    await this.store.set(key, JSON.stringify({ at: now(), presets } satisfies Cached), ttlMs);
    return presets;
  }
}

/** One entry per distinct query: the search is matched case-insensitively, so it is keyed so. */
function cacheKey(provider: string, query: MotionQuery): string {
  const search = query.search?.trim().toLowerCase() ?? '';
  return `resources:motions:${encodeURIComponent(provider)}:${query.size}:${query.category ?? '*'}:${encodeURIComponent(search)}`;
}
