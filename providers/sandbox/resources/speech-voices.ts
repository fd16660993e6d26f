/**
 * Built-in voices of `sandbox/speech`. A task's `voice_id` is one of these or a custom voice of
 * the caller's own account; the labels are what a voice picker filters on.
 */
export interface SandboxSpeechVoice {
  voice_id: string;
  name: string;
  accent: string;
  age: string;
  gender: string;
  /** What the preview recording says. */
  preview: string;
}

export const SANDBOX_SPEECH_VOICES: readonly SandboxSpeechVoice[] = [
  {
    voice_id: 'amelia',
    name: 'Amelia',
    accent: 'british',
    age: 'young',
    gender: 'female',
    preview: 'Hello, I am Amelia. I read the news with a light British accent.',
  },
  {
    voice_id: 'oliver',
    name: 'Oliver',
    accent: 'american',
    age: 'middle aged',
    gender: 'male',
    preview: 'Hi there, this is Oliver, a warm American narrator for your stories.',
  },
  {
    voice_id: 'priya',
    name: 'Priya',
    accent: 'indian',
    age: 'young',
    gender: 'female',
    preview: 'Namaste, I am Priya. Clear and friendly, for tutorials and support.',
  },
  {
    voice_id: 'mateo',
    name: 'Mateo',
    accent: 'spanish',
    age: 'young',
    gender: 'male',
    preview: 'Hola, soy Mateo. Energetic and upbeat, made for ads and social clips.',
  },
  {
    voice_id: 'hannah',
    name: 'Hannah',
    accent: 'german',
    age: 'middle aged',
    gender: 'female',
    preview: 'Guten Tag, I am Hannah. Calm and precise, for e-learning and guides.',
  },
  {
    voice_id: 'kenji',
    name: 'Kenji',
    accent: 'japanese',
    age: 'middle aged',
    gender: 'male',
    preview: 'Konnichiwa, I am Kenji. Measured and thoughtful, for documentaries.',
  },
  {
    voice_id: 'grace',
    name: 'Grace',
    accent: 'australian',
    age: 'old',
    gender: 'female',
    preview: "G'day, I am Grace. Gentle and wise, for audiobooks and bedtime stories.",
  },
  {
    voice_id: 'samuel',
    name: 'Samuel',
    accent: 'nigerian',
    age: 'old',
    gender: 'male',
    preview: 'Good evening, I am Samuel. Deep and resonant, for trailers and drama.',
  },
];

export const SANDBOX_SPEECH_VOICE_IDS: ReadonlySet<string> = new Set(SANDBOX_SPEECH_VOICES.map((v) => v.voice_id));
