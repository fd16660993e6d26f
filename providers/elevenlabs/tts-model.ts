import type { ModelConfig } from '../config/config-schema.ts';
import { ProviderRequestError } from '../common/provider-request-error.ts';
import { audioOutput } from '../common/media-audio-output.ts';
import { deadlineOption, withMediaDefaults } from '../common/media-defaults.ts';
import { syncMediaModel } from '../common/media-sync-job.ts';
import { configuredMedia } from '../common/config-media-model.ts';
import type { MediaModel } from '../types.ts';
import type { ElevenLabsApi } from './elevenlabs-api.ts';
import type { ElevenLabsVoiceList } from './voice-list.ts';

/** `output_format` is `codec_samplerate[_bitrate]`; ElevenLabs adds formats over time. */
const OUTPUT_FORMAT = '^(mp3|pcm|wav|ulaw|alaw|opus)_[0-9]+(_[0-9]+)?$';

/**
 * The client's `input` when the config declares none: the documented body of text to speech,
 * plus `voice_id` (a path parameter upstream) and `output_format` (a query parameter).
 * @see https://elevenlabs.io/docs/api-reference/text-to-speech/convert
 */
export const ELEVENLABS_TTS_INPUT = {
  text: { type: 'string', required: true, min_length: 1, max_length: 40000 },
  voice_id: { type: 'string', required: true, min_length: 1, max_length: 100 },
  output_format: { type: 'string', pattern: OUTPUT_FORMAT },
  language_code: { type: 'string' },
  voice_settings: { type: 'object' },
  seed: { type: 'integer', min: 0, max: 4294967295 },
  previous_text: { type: 'string' },
  next_text: { type: 'string' },
  apply_text_normalization: { type: 'string', enum: ['auto', 'on', 'off'] },
};

/** The stored type of a format whose bytes carry no signature (raw PCM, µ-law, A-law). */
function formatType(format: unknown): string | undefined {
  if (typeof format !== 'string') return 'audio/mpeg'; // the API's default, mp3_44100_128
  const [codec, rate] = format.split('_');
  switch (codec) {
    case 'mp3':
      return 'audio/mpeg';
    case 'wav':
      return 'audio/wav';
    case 'opus':
      return 'audio/ogg';
    case 'pcm':
      return `audio/L16; rate=${rate}; channels=1`;
    case 'ulaw':
      return `audio/PCMU; rate=${rate}`;
    case 'alaw':
      return `audio/PCMA; rate=${rate}`;
    default:
      return undefined;
  }
}

/**
 * `POST {base_url}/v1/text-to-speech/{voice_id}?output_format=…` with `model_id` = the model's
 * `upstream_model`: the answer is the audio file. `voice_id` is one of the listed voices of
 * `GET /v1/resources/<provider>/voices`, or a custom voice the caller's own account cloned.
 * @see https://elevenlabs.io/docs/api-reference/text-to-speech/convert
 */
export function elevenLabsTtsModel(model: ModelConfig, api: ElevenLabsApi, voices: ElevenLabsVoiceList): MediaModel {
  const configured = configuredMedia(withMediaDefaults(model, { input: ELEVENLABS_TTS_INPUT, text_field: 'text' }));
  /** The upstream request's parts: renames per `input_map` may name the voice or format. */
  const split = (input: Record<string, unknown>) => {
    const { voice_id, output_format, ...body } = configured.upstreamInput(input);
    return { voiceId: voice_id, format: output_format, body };
  };

  return syncMediaModel({
    label: api.label,
    configured,
    deadlineMs: deadlineOption(model),
    async validate(input, ctx) {
      const { voiceId } = split(input);
      if (typeof voiceId !== 'string' || voiceId === '') return [{ path: 'voice_id', message: 'is required' }];
      if (await ctx.customVoice(voiceId)) return [];
      let listed: boolean;
      try {
        listed = await voices.has(voiceId);
      } catch (err) {
        throw new ProviderRequestError(
          502,
          `could not check input.voice_id: the ElevenLabs voice list is unavailable (${err instanceof Error ? err.message : String(err)})`,
        );
      }
      if (listed) return [];
      return [
        {
          path: 'voice_id',
          message: `unknown voice "${voiceId}": use a voice of GET /v1/resources/<provider>/voices or a custom voice this account created`,
        },
      ];
    },
    async run(job) {
      const { voiceId, format, body } = split(job.input);
      const query = typeof format === 'string' ? `?output_format=${encodeURIComponent(format)}` : '';
      const res = await api.request('POST', `/v1/text-to-speech/${encodeURIComponent(String(voiceId))}${query}`, {
        body: { ...body, model_id: job.model.upstreamModel },
        accept: 'audio/*',
        signal: job.signal,
      });
      return [await audioOutput(res, formatType(format))];
    },
  });
}
