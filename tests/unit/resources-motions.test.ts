import { describe, expect, test } from 'bun:test';
import { MOTION_CATEGORIES, type MotionPreset } from '../../providers/common/resources.ts';
import { filterMotions } from '../../providers/common/resources-motions.ts';
import { stableUuid } from '../../providers/common/resources-stable-uuid.ts';
import { SANDBOX_MOTIONS } from '../../providers/sandbox/resources/motion-presets.ts';
import { sandboxResources } from '../../providers/sandbox/resources/index.ts';
import { MOTION_CACHE_MS, MotionPresetsCache } from '../../src/resources/motion-presets-cache.ts';
import { MotionPresetError } from '../../src/resources/motion-error.ts';
import { parseMotionQuery } from '../../src/resources/resource-requests.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

/** Motion presets (docs/api-contract.md, "Provider resources", "Limits"): filtering, ids, query parsing, the 30-minute cache. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('sandbox motion presets', () => {
  test('cover the six categories with unique, stable UUIDs', () => {
    expect(new Set(SANDBOX_MOTIONS.map((m) => m.category))).toEqual(new Set(MOTION_CATEGORIES));
    for (const m of SANDBOX_MOTIONS) expect(m.id).toMatch(UUID);
    expect(new Set(SANDBOX_MOTIONS.map((m) => m.id)).size).toBe(SANDBOX_MOTIONS.length);
    expect(stableUuid('sandbox.motions', 'vfx/Explosion')).toBe(
      SANDBOX_MOTIONS.find((m) => m.name === 'Explosion')!.id,
    );
    expect(stableUuid('a', 'b')).not.toBe(stableUuid('a', 'c'));
    expect(SANDBOX_MOTIONS.length).toBeGreaterThan(30);
  });

  test('size cuts, category filters, search matches part of the name case-insensitively', async () => {
    expect(filterMotions(SANDBOX_MOTIONS, { size: 30 })).toHaveLength(30);
    expect(filterMotions(SANDBOX_MOTIONS, { size: 3 })).toEqual(SANDBOX_MOTIONS.slice(0, 3));
    const vfx = filterMotions(SANDBOX_MOTIONS, { size: 100, category: 'vfx' });
    expect(vfx.length).toBe(SANDBOX_MOTIONS.filter((m) => m.category === 'vfx').length);
    expect(vfx.every((m) => m.category === 'vfx')).toBe(true);
    expect(filterMotions(SANDBOX_MOTIONS, { size: 100, search: '  DOLLY ' }).map((m) => m.name)).toEqual([
      'Dolly Zoom Reveal',
      'Dolly In',
      'Dolly Out',
    ]);
    expect(
      filterMotions(SANDBOX_MOTIONS, { size: 100, search: 'dolly', category: 'camera_control' }).map((m) => m.name),
    ).toEqual(['Dolly In', 'Dolly Out']);
    expect(filterMotions(SANDBOX_MOTIONS, { size: 1, search: 'dolly' }).map((m) => m.name)).toEqual([
      'Dolly Zoom Reveal',
    ]);
    expect(filterMotions(SANDBOX_MOTIONS, { size: 10, search: 'no such preset' })).toEqual([]);
    expect(await sandboxResources.listMotions!({ size: 2, category: 'ugc' })).toEqual(
      SANDBOX_MOTIONS.filter((m) => m.category === 'ugc').slice(0, 2),
    );
  });
});

describe('motion query', () => {
  test('defaults, normalisation and the search parameter', () => {
    expect(parseMotionQuery({})).toEqual({ size: 30 });
    expect(parseMotionQuery({ size: '', category: '', search: '' })).toEqual({ size: 30 });
    expect(parseMotionQuery({ size: '5', category: 'VFX', search: ' fire ', other: 'ignored' })).toEqual({
      size: 5,
      category: 'vfx',
      search: 'fire',
    });
  });

  test('a bad value is a 400 in the motion shape, naming the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ category: 'bad' }, 'invalid_category'],
      [{ size: 'abc' }, 'invalid_size'],
      [{ size: '0' }, 'invalid_size'],
      [{ size: '1.5' }, 'invalid_size'],
      [{ size: '101' }, 'invalid_size'],
      [{ search: 'x'.repeat(101) }, 'invalid_search'],
    ];
    for (const [query, code] of cases) {
      let error: unknown;
      try {
        parseMotionQuery(query);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(MotionPresetError);
      const e = error as MotionPresetError;
      expect(e.status).toBe(400);
      expect(e.body()).toEqual({
        code: 400,
        error: { message: expect.stringMatching(new RegExp(`^${code.slice(8)}: `)), code },
      });
    }
  });
});

describe('motion presets cache', () => {
  const preset = (name: string): MotionPreset => ({ id: stableUuid('test', name), name, category: 'new' });

  test('a cached answer survives a change of the source until 30 minutes have passed', async () => {
    let clock = 1_000_000;
    const now = () => clock;
    const cache = new MotionPresetsCache(new MemoryStore(now), { now });
    let source = [preset('First')];
    let loads = 0;
    const load = () => {
      loads++;
      return source;
    };
    const query = { size: 30 };

    expect(await cache.get('sandbox', query, load)).toEqual([preset('First')]);
    source = [preset('Second')];
    clock += MOTION_CACHE_MS - 1;
    expect(await cache.get('sandbox', query, load)).toEqual([preset('First')]);
    expect(loads).toBe(1);

    clock += 1;
    expect(await cache.get('sandbox', query, load)).toEqual([preset('Second')]);
    expect(loads).toBe(2);
    // Refreshed at that moment: fresh for another 30 minutes.
    source = [preset('Third')];
    clock += MOTION_CACHE_MS - 1;
    expect(await cache.get('sandbox', query, load)).toEqual([preset('Second')]);
  });

  test('keyed by provider and query; the clock decides even when the store still holds the entry', async () => {
    let clock = 0;
    const store = new MemoryStore(); // real-time expiry: only the cache's clock moves
    const cache = new MotionPresetsCache(store, { now: () => clock });
    let loads = 0;
    const load = (name: string) => () => {
      loads++;
      return [preset(name)];
    };
    await cache.get('sandbox', { size: 30 }, load('a'));
    await cache.get('sandbox', { size: 5 }, load('b'));
    await cache.get('sandbox', { size: 30, category: 'vfx' }, load('c'));
    await cache.get('sandbox', { size: 30, search: 'Fire' }, load('d'));
    await cache.get('other', { size: 30 }, load('e'));
    expect(loads).toBe(5);
    // Search is case-insensitive, so it is one entry.
    expect(await cache.get('sandbox', { size: 30, search: ' fire' }, load('x'))).toEqual([preset('d')]);
    expect(loads).toBe(5);
    clock += MOTION_CACHE_MS;
    expect(await cache.get('sandbox', { size: 30 }, load('f'))).toEqual([preset('f')]);
    expect(loads).toBe(6);
    await store.close();
  });
});
