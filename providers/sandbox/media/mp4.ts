import { allocateFrame, idrPcmNal } from './h264-ipcm.ts';
import { chooseLevel, frameGeometry, ppsNal, spsNal } from './h264-params.ts';
import { ftyp, moov } from './mp4-avc-track.ts';
import { box, concat, u32, type Bytes } from './mp4-boxes.ts';
import { framePainter } from './video-frames.ts';

/**
 * The sandbox video model's output: a real, playable MP4 (H.264 Constrained Baseline, every frame an
 * IDR picture of I_PCM macroblocks) showing the prompt's sandbox artwork with a sweeping light bar.
 *
 * Size budget: I_PCM stores raw 4:2:0 samples, ~1.5 bytes per pixel per frame, so the frame is scaled
 * to fit a 256×256 box (1280×720 → 256×144, exactly 16×9 macroblocks) at 6 fps by default:
 * ≈55 KB per frame, ≈330 KB per second, so 10 s ≈ 3.3 MB. Six frames per second is the lowest rate
 * where the sweep still reads as motion rather than a slideshow.
 */
export const MAX_VIDEO_SIDE = 256;
export const DEFAULT_VIDEO_FPS = 6;
export const MAX_VIDEO_FPS = 30;
/** 120 s at the defaults is ≈40 MB; beyond that a sandbox response is a liability. */
export const MAX_VIDEO_SECONDS = 120;

export interface SandboxVideoOptions {
  seconds: number;
  width: number;
  height: number;
  fps?: number;
}

/** The encoded frame size for a requested size: aspect kept, fitted to MAX_VIDEO_SIDE, even sides. */
export function videoFrameSize(width: number, height: number): { width: number; height: number } {
  if (!(width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))) {
    throw new RangeError(`video size must be positive, got ${width}x${height}`);
  }
  const scale = Math.min(1, MAX_VIDEO_SIDE / Math.max(width, height));
  const even = (side: number): number => Math.max(2, 2 * Math.round((side * scale) / 2));
  return { width: even(width), height: even(height) };
}

/** Integer frame rate in 1..MAX_VIDEO_FPS (integer so every frame lasts exactly 1000 ticks). */
export function videoFps(fps: number | undefined): number {
  return Math.min(MAX_VIDEO_FPS, Math.max(1, Math.round(fps ?? DEFAULT_VIDEO_FPS)));
}

/**
 * Frame timing: timescale = fps × 1000 so regular frames last 1000 ticks; the last frame absorbs the
 * remainder so the track lasts exactly `seconds` (to 1/timescale) even when seconds × fps is fractional.
 */
export function frameDurations(seconds: number, fps: number): { timescale: number; durations: number[] } {
  const timescale = fps * 1000;
  const total = Math.max(1, Math.round(seconds * timescale));
  const count = Math.max(1, Math.round(seconds * fps));
  const durations = Array.from({ length: count }, (_, i) => (i < count - 1 ? 1000 : total - 1000 * (count - 1)));
  return { timescale, durations };
}

export function sandboxVideo(prompt: string, opts: SandboxVideoOptions): Uint8Array {
  if (!(opts.seconds > 0 && opts.seconds <= MAX_VIDEO_SECONDS)) {
    throw new RangeError(`video length must be in (0, ${MAX_VIDEO_SECONDS}] seconds, got ${opts.seconds}`);
  }
  const size = videoFrameSize(opts.width, opts.height);
  const fps = videoFps(opts.fps);
  const geometry = frameGeometry(size.width, size.height);
  const { timescale, durations } = frameDurations(opts.seconds, fps);
  const frame = allocateFrame(geometry);
  const painter = framePainter(prompt, geometry.widthMbs * 16, geometry.heightMbs * 16);

  // Each MP4 sample is one access unit: a 4-byte big-endian length, then the IDR slice NAL unit.
  const samples: Bytes[] = [];
  let elapsed = 0;
  for (let i = 0; i < durations.length; i++) {
    painter.paint(frame, elapsed / timescale);
    elapsed += durations[i]!;
    const nal = idrPcmNal(geometry, frame, i % 2);
    samples.push(concat([u32(nal.length), nal]));
  }

  const bitsPerSecond = (samples.reduce((n, s) => n + s.length, 0) * 8) / opts.seconds;
  const track = {
    ...size,
    sps: spsNal(geometry, chooseLevel(geometry, fps, bitsPerSecond)),
    pps: ppsNal(),
    timescale,
    sampleDurations: durations,
    sampleSizes: samples.map((s) => s.length),
  };
  const head = ftyp();
  // moov's size does not depend on the offset value, so measure it once with a placeholder.
  const moovSize = moov({ ...track, chunkOffset: 0 }).length;
  const movie = moov({ ...track, chunkOffset: head.length + moovSize + 8 });
  return concat([head, movie, box('mdat', ...samples)]);
}
