import type { MediaKind, MediaOutput } from '../types.ts';
import { outputFromUrl, pick } from '../common/media-outputs.ts';

/** Where fal's media models put their files, most specific first. */
const FILE_FIELDS = ['images', 'image', 'videos', 'video', 'audios', 'audio', 'audio_file', 'audio_url', 'output'];

/** A fal File: `{url, content_type?, file_name?, file_size?, width?, height?}`, or a bare URL. */
function collectFiles(value: unknown, kind: MediaKind, into: MediaOutput[]): void {
  if (typeof value === 'string') {
    const output = outputFromUrl(value, kind);
    if (output) into.push(output);
  } else if (Array.isArray(value)) {
    for (const item of value) collectFiles(item, kind, into);
  } else if (value !== null && typeof value === 'object') {
    const file = value as { url?: unknown; content_type?: unknown };
    if (typeof file.url === 'string') {
      const output = outputFromUrl(
        file.url,
        kind,
        typeof file.content_type === 'string' ? file.content_type : undefined,
      );
      if (output) into.push(output);
    } else {
      for (const item of Object.values(value)) collectFiles(item, kind, into);
    }
  }
}

/**
 * The files of a fal result: `options.output_field` when configured, else the first of the
 * usual fields (`images`, `video`, `audio`, …) that holds any, else anything URL-like in it.
 * @see https://fal.ai/models/fal-ai/flux/dev/api#schema-output
 */
export function falOutputs(result: unknown, kind: MediaKind, outputField?: string): MediaOutput[] {
  const outputs: MediaOutput[] = [];
  if (outputField) {
    collectFiles(pick(result, outputField), kind, outputs);
    return outputs;
  }
  for (const field of FILE_FIELDS) {
    collectFiles(pick(result, field), kind, outputs);
    if (outputs.length) return outputs;
  }
  collectFiles(result, kind, outputs);
  return outputs;
}
