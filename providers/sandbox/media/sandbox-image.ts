import { encodePng } from './png.ts';
import { hashString, palette, prng, type Rgb } from './seed.ts';

/**
 * The sandbox image model's output: a deterministic "postcard" derived from the prompt — a diagonal
 * two-colour gradient, a few translucent soft-edged discs and a rolling hill silhouette. Same
 * prompt + index gives the same bytes; `index` varies the picture when n > 1 images are requested.
 */
export const MAX_IMAGE_SIDE = 4096;

/** Alpha-blends `colour` into the RGB buffer at byte offset `i`. */
function blend(rgb: Uint8Array, i: number, colour: Rgb, alpha: number): void {
  rgb[i] = rgb[i]! + (colour[0] - rgb[i]!) * alpha;
  rgb[i + 1] = rgb[i + 1]! + (colour[1] - rgb[i + 1]!) * alpha;
  rgb[i + 2] = rgb[i + 2]! + (colour[2] - rgb[i + 2]!) * alpha;
}

function paintGradient(rgb: Uint8Array, width: number, height: number, from: Rgb, to: Rgb, angle: number): void {
  const dx = Math.cos(angle);
  const dy = Math.sin(angle);
  // Project the corners so t spans exactly 0..1 across the image whatever the angle.
  const corners = [0, width * dx, height * dy, width * dx + height * dy];
  const min = Math.min(...corners);
  const span = Math.max(...corners) - min || 1;
  for (let y = 0; y < height; y++) {
    let i = y * width * 3;
    for (let x = 0; x < width; x++, i += 3) {
      const t = (x * dx + y * dy - min) / span;
      rgb[i] = from[0] + (to[0] - from[0]) * t;
      rgb[i + 1] = from[1] + (to[1] - from[1]) * t;
      rgb[i + 2] = from[2] + (to[2] - from[2]) * t;
    }
  }
}

/** A disc with a soft (anti-aliased) rim; only its bounding box is visited. */
function paintDisc(
  rgb: Uint8Array,
  width: number,
  height: number,
  cx: number,
  cy: number,
  r: number,
  colour: Rgb,
  alpha: number,
): void {
  const feather = Math.max(1, r * 0.04);
  const y0 = Math.max(0, Math.floor(cy - r - feather));
  const y1 = Math.min(height - 1, Math.ceil(cy + r + feather));
  const x0 = Math.max(0, Math.floor(cx - r - feather));
  const x1 = Math.min(width - 1, Math.ceil(cx + r + feather));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const edge = (r - Math.hypot(x - cx, y - cy)) / feather;
      if (edge <= 0) continue;
      blend(rgb, (y * width + x) * 3, colour, alpha * Math.min(1, edge));
    }
  }
}

/** A sine-wave hill along the bottom, shaded darker towards the bottom edge for depth. */
function paintHill(rgb: Uint8Array, width: number, height: number, colour: Rgb, phase: number, waves: number): void {
  for (let x = 0; x < width; x++) {
    const top = height * (0.72 + 0.07 * Math.sin(phase + (x / width) * Math.PI * waves));
    for (let y = Math.max(0, Math.ceil(top)); y < height; y++) {
      const depth = (y - top) / Math.max(1, height - top);
      blend(rgb, (y * width + x) * 3, colour, 0.75 + 0.2 * depth);
    }
  }
}

/** Paints the RGB pixels (row-major, 3 bytes each); split out so callers can reuse the artwork. */
export function paintSandboxImage(prompt: string, width: number, height: number, index: number): Uint8Array {
  const seed = hashString(`${prompt}\u0000${index}`);
  const rand = prng(seed);
  const colours = palette(seed);
  const rgb = new Uint8Array(width * height * 3);
  paintGradient(rgb, width, height, colours.from, colours.to, rand() * Math.PI * 2);
  const unit = Math.min(width, height);
  const discs = 3 + Math.floor(rand() * 3);
  for (let d = 0; d < discs; d++) {
    const colour: Rgb = d === 0 ? colours.accent : rand() < 0.5 ? [255, 255, 255] : colours.to;
    paintDisc(
      rgb,
      width,
      height,
      rand() * width,
      rand() * height * 0.7,
      unit * (0.06 + 0.18 * rand()),
      colour,
      0.25 + 0.45 * rand(),
    );
  }
  const shade: Rgb = [colours.from[0] * 0.5, colours.from[1] * 0.5, colours.from[2] * 0.5];
  paintHill(rgb, width, height, shade, rand() * Math.PI * 2, 1 + rand() * 3);
  return rgb;
}

/** PNG bytes for the sandbox image of `prompt` (see module comment). */
export function sandboxImage(prompt: string, width: number, height: number, index = 0): Uint8Array {
  for (const side of [width, height]) {
    if (!Number.isInteger(side) || side < 1 || side > MAX_IMAGE_SIDE) {
      throw new RangeError(`sandbox image sides must be integers in 1..${MAX_IMAGE_SIDE}, got ${width}x${height}`);
    }
  }
  return encodePng(width, height, paintSandboxImage(prompt, width, height, index));
}
