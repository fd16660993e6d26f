import type { MediaAdapter, MediaModel } from '../types.ts';
import { sandboxImageModel } from './image-model.ts';
import { sandboxSpeechModel } from './speech-model.ts';
import { sandboxVideoModel } from './video-model.ts';

/** Sandbox media models by upstream name (`sandbox/image` → `image`). */
const MODELS: Record<string, MediaModel> = {
  image: sandboxImageModel,
  video: sandboxVideoModel,
  speech: sandboxSpeechModel,
};

export const sandboxMedia: MediaAdapter = {
  model: (config) => MODELS[config.upstream_model ?? config.id.split('/')[1] ?? ''],
};
