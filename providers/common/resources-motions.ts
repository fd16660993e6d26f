import type { MotionPreset, MotionQuery } from './resources.ts';

/** The API contract's motion query over a provider's full preset list: category, then name search, then size. */
export function filterMotions(presets: readonly MotionPreset[], query: MotionQuery): MotionPreset[] {
  const search = query.search?.trim().toLowerCase();
  return presets
    .filter(
      (p) =>
        (query.category === undefined || p.category === query.category) &&
        (!search || p.name.toLowerCase().includes(search)),
    )
    .slice(0, query.size);
}
