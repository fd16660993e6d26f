import type { ProviderResources } from '../../common/resources.ts';
import { filterMotions } from '../../common/resources-motions.ts';
import { SANDBOX_MOTIONS } from './motion-presets.ts';
import { SANDBOX_SPEECH_VOICES } from './speech-voices.ts';
import { SANDBOX_MODEL_FAMILY, SANDBOX_STRING_VOICES, voiceDisplayName } from './string-voices.ts';
import { sandboxVerificationPhrase } from './verification-phrases.ts';
import { SANDBOX_PRODUCT, SANDBOX_VIDEO_VOICES } from './video-voices.ts';
import { speechVoicePreviewName, stringVoiceSampleName, voiceSample } from './voice-samples.ts';

/** Custom voice ids: a prefix no built-in id has, then 96 random bits. */
const newCustomVoiceId = () => `cv_${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('hex')}`;

/** Every resource of the API contract, served offline (docs/api-contract.md, "The sandbox provider"). */
export const sandboxResources: ProviderResources = {
  listVideoVoices: (product) => (product === SANDBOX_PRODUCT ? [...SANDBOX_VIDEO_VOICES] : undefined),
  listStringVoices: (family, host) =>
    family === SANDBOX_MODEL_FAMILY
      ? SANDBOX_STRING_VOICES.map((v) => ({
          id: v.id,
          name: voiceDisplayName(v.id),
          description: v.description,
          sample: host.assetUrl(stringVoiceSampleName(v.id)),
        }))
      : undefined,
  listSpeechVoices: (host) =>
    SANDBOX_SPEECH_VOICES.map((v) => ({
      voice_id: v.voice_id,
      name: v.name,
      category: 'premade',
      labels: { accent: v.accent, age: v.age, gender: v.gender },
      preview_url: host.assetUrl(speechVoicePreviewName(v.voice_id)),
    })),
  // The sandbox has no upstream to clone with: the kept samples are the voice.
  createCustomVoice: async () => ({ voice_id: newCustomVoiceId() }),
  verificationPhrase: (language) => sandboxVerificationPhrase(language),
  motionProduct: SANDBOX_PRODUCT,
  listMotions: (query) => filterMotions(SANDBOX_MOTIONS, query),
  asset: voiceSample,
};
