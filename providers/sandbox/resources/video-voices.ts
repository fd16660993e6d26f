import type { IntegerVoice } from '../../common/resources.ts';

/** The product of the sandbox's integer-id voices and motion presets (docs/api-contract.md). */
export const SANDBOX_PRODUCT = 'clips';

/** Integer-id voice presets of `clips`: a task names them as `voices: [id]` or `voices: [{voice_id: id}]`. */
export const SANDBOX_VIDEO_VOICES: readonly IntegerVoice[] = [
  { id: 1, name: 'Warm Narrator' },
  { id: 2, name: 'Bright Host' },
  { id: 3, name: 'Calm Guide' },
  { id: 4, name: 'Energetic Presenter' },
  { id: 5, name: 'Gentle Storyteller' },
  { id: 6, name: 'Deep Trailer Voice' },
  { id: 7, name: 'Friendly Teen' },
  { id: 8, name: 'Wise Elder' },
  { id: 9, name: 'Crisp Newsreader' },
  { id: 10, name: 'Playful Cartoon' },
  { id: 11, name: 'Soft Whisper' },
  { id: 12, name: 'Confident Coach' },
];

export const SANDBOX_VIDEO_VOICE_IDS: ReadonlySet<number> = new Set(SANDBOX_VIDEO_VOICES.map((v) => v.id));
