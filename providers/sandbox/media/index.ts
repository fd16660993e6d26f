/** Offline sandbox media: deterministic, real files with no network and no external encoders. */
export { encodePng, type PixelFn } from './png.ts';
export { encodeWav } from './wav.ts';
export { sandboxImage, paintSandboxImage, MAX_IMAGE_SIDE } from './sandbox-image.ts';
export { sandboxSpeech, speechSeconds, speechSampleCount, SPEECH_SAMPLE_RATE } from './sandbox-speech.ts';
export {
  sandboxVideo,
  videoFrameSize,
  videoFps,
  DEFAULT_VIDEO_FPS,
  MAX_VIDEO_SECONDS,
  MAX_VIDEO_SIDE,
  type SandboxVideoOptions,
} from './mp4.ts';
