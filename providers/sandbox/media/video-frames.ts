import type { YuvFrame } from './h264-ipcm.ts';
import { paintSandboxImage } from './sandbox-image.ts';

/**
 * Frames for the sandbox video: the prompt's sandbox still (same artwork as the image model), with
 * a soft light bar sweeping across and a slow warm/cool colour drift, so motion is obvious in any
 * player. Output is BT.601 limited-range YUV 4:2:0 — what H.264 decoders assume without VUI — and
 * limited range also keeps PCM samples away from 0x00, which avoids emulation-prevention bytes.
 * @see https://www.itu.int/rec/R-REC-BT.601
 */
export interface FramePainter {
  paint(frame: YuvFrame, seconds: number): void;
}

/** Seconds for the light bar to cross the frame once. */
const SWEEP_SECONDS = 2.5;
/** Period of the warm/cool drift. */
const DRIFT_SECONDS = 6;

/** `lumaWidth`×`lumaHeight` is the macroblock-padded size; the padding is cropped by the SPS. */
export function framePainter(prompt: string, lumaWidth: number, lumaHeight: number): FramePainter {
  const base = paintSandboxImage(prompt, lumaWidth, lumaHeight, 0);
  const rgb = new Float32Array(lumaWidth * lumaHeight * 3);
  const barWidth = Math.max(4, lumaWidth * 0.12);
  return {
    paint(frame: YuvFrame, seconds: number): void {
      const warm = 0.12 * Math.sin((2 * Math.PI * seconds) / DRIFT_SECONDS);
      const barCentre = ((seconds / SWEEP_SECONDS) % 1) * (lumaWidth + 2 * barWidth) - barWidth;
      for (let y = 0; y < lumaHeight; y++) {
        for (let x = 0; x < lumaWidth; x++) {
          const i = (y * lumaWidth + x) * 3;
          const d = Math.abs(x - barCentre) / barWidth;
          const light = d < 1 ? 70 * (0.5 + 0.5 * Math.cos(Math.PI * d)) : 0;
          rgb[i] = Math.min(255, base[i]! * (1 + warm) + light);
          rgb[i + 1] = Math.min(255, base[i + 1]! + light);
          rgb[i + 2] = Math.min(255, base[i + 2]! * (1 - warm) + light);
        }
      }
      toYuv420(rgb, lumaWidth, lumaHeight, frame);
    },
  };
}

/** BT.601 limited-range RGB→YCbCr; chroma from the average of each 2×2 block
 * (the sums below are divided by 4 × 255 = 1020). */
export function toYuv420(rgb: Float32Array, width: number, height: number, frame: YuvFrame): void {
  for (let i = 0, p = 0; p < width * height; p++, i += 3) {
    frame.y[p] = 16 + (65.481 * rgb[i]! + 128.553 * rgb[i + 1]! + 24.966 * rgb[i + 2]!) / 255 + 0.5;
  }
  const chromaWidth = width / 2;
  for (let cy = 0; cy < height / 2; cy++) {
    for (let cx = 0; cx < chromaWidth; cx++) {
      const i0 = (2 * cy * width + 2 * cx) * 3;
      const i1 = i0 + width * 3;
      const r = rgb[i0]! + rgb[i0 + 3]! + rgb[i1]! + rgb[i1 + 3]!;
      const g = rgb[i0 + 1]! + rgb[i0 + 4]! + rgb[i1 + 1]! + rgb[i1 + 4]!;
      const b = rgb[i0 + 2]! + rgb[i0 + 5]! + rgb[i1 + 2]! + rgb[i1 + 5]!;
      frame.u[cy * chromaWidth + cx] = 128 + (-37.797 * r - 74.203 * g + 112 * b) / 1020 + 0.5;
      frame.v[cy * chromaWidth + cx] = 128 + (112 * r - 93.786 * g - 18.214 * b) / 1020 + 0.5;
    }
  }
}
