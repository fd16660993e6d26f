import type { ModelConfig, ProviderConfig } from '../config/config-schema.ts';
import { configuredMedia } from '../common/config-media-model.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import type { UpstreamHealth } from '../common/upstream-health.ts';
import { upstreamRequest } from '../common/upstream-request.ts';
import type { MediaModel } from '../types.ts';
import { audioOutput } from '../common/media-audio-output.ts';
import { deadlineOption, withMediaDefaults } from '../common/media-defaults.ts';
import { syncMediaModel } from '../common/media-sync-job.ts';

/** The built-in voices of `POST /audio/speech`. */
export const OPENAI_SPEECH_VOICES = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
] as const;

/** `response_format` → the type to store when the bytes carry no signature (raw PCM). */
const FORMAT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/L16; rate=24000; channels=1',
};

/**
 * The client's `input` when the config declares none. The text is `text`, as in every speech
 * model of the gateway, and renamed to the API's `input` on the way up.
 * @see https://platform.openai.com/docs/api-reference/audio/createSpeech
 */
export const OPENAI_SPEECH_INPUT = {
  text: { type: 'string', required: true, min_length: 1, max_length: 4096 },
  voice: { type: 'string', enum: [...OPENAI_SPEECH_VOICES], default: 'alloy' },
  response_format: { type: 'string', enum: Object.keys(FORMAT_TYPES), default: 'mp3' },
  speed: { type: 'number', min: 0.25, max: 4 },
  instructions: { type: 'string', max_length: 4096 },
};

/**
 * `POST {base_url}/audio/speech`: the answer is the audio file itself, stored as it came.
 * @see https://platform.openai.com/docs/api-reference/audio/createSpeech
 */
export function openAISpeechModel(provider: ProviderConfig, model: ModelConfig, health?: UpstreamHealth): MediaModel {
  const configured = configuredMedia(
    withMediaDefaults(model, { input: OPENAI_SPEECH_INPUT, input_map: { text: 'input' }, text_field: 'text' }),
  );
  const url = `${baseUrl(provider, 'https://api.openai.com/v1')}/audio/speech`;
  const headers: Record<string, string> = {
    accept: '*/*',
    ...(provider.api_key ? { authorization: `Bearer ${provider.api_key}` } : {}),
  };
  const policy = retryPolicy(provider);

  return syncMediaModel({
    label: provider.id,
    configured,
    deadlineMs: deadlineOption(model),
    async run(job) {
      // Streaming (`stream_format: sse`) would wrap the audio in events; a task wants the file.
      const body = { ...configured.upstreamInput(job.input), model: job.model.upstreamModel, stream_format: undefined };
      const res = await upstreamRequest({ method: 'POST', url, headers, body, policy, signal: job.signal, health });
      const format = typeof job.input.response_format === 'string' ? job.input.response_format : 'mp3';
      return [await audioOutput(res, FORMAT_TYPES[format])];
    },
  });
}
