import { ProviderRequestError } from '../common/provider-request-error.ts';
import type { ProviderResources } from '../common/resources.ts';
import type { ElevenLabsApi } from './elevenlabs-api.ts';
import { cloneVoice } from './voice-clone.ts';
import type { ElevenLabsVoiceList } from './voice-list.ts';

/**
 * What ElevenLabs serves under `/v1/resources/<provider>/`: its voices as the API contract's speech
 * voices (`GET …/voices`) and instant voice cloning as "create a custom cloned voice"
 * (`POST …/voices`). Nothing else: no video voices, motions or verification phrases.
 */
export function elevenLabsResources(
  api: ElevenLabsApi,
  voices: ElevenLabsVoiceList,
  opts: { removeBackgroundNoise: boolean },
): ProviderResources {
  return {
    async listSpeechVoices() {
      try {
        return await voices.voices();
      } catch (err) {
        throw new ProviderRequestError(
          502,
          `elevenlabs: the voice list is unavailable (${err instanceof Error ? err.message : String(err)})`,
        );
      }
    },
    createCustomVoice: (request) => cloneVoice(api, request, opts),
  };
}
