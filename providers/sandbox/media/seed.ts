/**
 * Deterministic randomness for sandbox media: the same prompt always yields the same bytes,
 * so tests and clients can cache or compare outputs.
 */

/** 32-bit FNV-1a over the UTF-8 bytes of `text`. @see http://www.isthe.com/chongo/tech/comp/fnv/ */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) h = Math.imul(h ^ byte, 0x01000193);
  return h >>> 0;
}

/** mulberry32: tiny, well-distributed PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rgb = [number, number, number];

/** HSL (h in turns, s/l in 0..1) to 8-bit RGB; HSL makes "pleasant" palettes easy to constrain. */
export function hsl(h: number, s: number, l: number): Rgb {
  const hue = ((h % 1) + 1) % 1;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number): number => {
    const k = (n + hue * 12) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

/**
 * Three harmonious colours from a seed: a base hue, its neighbour (analogous) and an accent
 * roughly opposite, all mid-saturation so nothing looks garish.
 */
export function palette(seed: number): { from: Rgb; to: Rgb; accent: Rgb } {
  const rand = prng(seed);
  const hue = rand();
  return {
    from: hsl(hue, 0.55 + 0.2 * rand(), 0.3 + 0.15 * rand()),
    to: hsl(hue + 0.12 + 0.1 * rand(), 0.55 + 0.2 * rand(), 0.55 + 0.15 * rand()),
    accent: hsl(hue + 0.45 + 0.1 * rand(), 0.65, 0.65),
  };
}
