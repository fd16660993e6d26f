/**
 * String-id voice presets of the `sandbox-video-1` family: the API contract's 30 ids, each with a tone
 * and a register so a client can pick one without listening to all of them.
 */
export const SANDBOX_MODEL_FAMILY = 'sandbox-video-1';

interface StringVoicePreset {
  id: string;
  description: string;
}

export const SANDBOX_STRING_VOICES: readonly StringVoicePreset[] = [
  {
    id: 'achernar',
    description: 'Soft, high-pitched female voice; gentle and reassuring, suits calm narration and wellness content.',
  },
  {
    id: 'achird',
    description: 'Friendly mid-range male voice; warm and approachable, suits tutorials and product walkthroughs.',
  },
  {
    id: 'algenib',
    description: 'Gravelly, low male voice with a rough texture; suits dramatic trailers and gritty storytelling.',
  },
  {
    id: 'algieba',
    description: 'Smooth male voice with an even, polished delivery; suits premium brand spots and voice-overs.',
  },
  { id: 'alnilam', description: 'Firm, steady male voice; confident and direct, suits announcements and explainers.' },
  {
    id: 'aoede',
    description: 'Breezy, light female voice; relaxed and conversational, suits lifestyle and travel clips.',
  },
  { id: 'autonoe', description: 'Bright female voice with a clear, lifted tone; suits upbeat ads and social content.' },
  {
    id: 'callirrhoe',
    description: 'Easy-going female voice; unhurried and friendly, suits vlogs and casual narration.',
  },
  {
    id: 'charon',
    description: 'Informative, deep male voice; measured and trustworthy, suits documentaries and news.',
  },
  { id: 'despina', description: 'Smooth, warm female voice; polished and elegant, suits fashion and beauty content.' },
  {
    id: 'enceladus',
    description: 'Breathy, soft male voice; intimate and calm, suits meditation and late-night stories.',
  },
  { id: 'erinome', description: 'Clear female voice with precise articulation; suits e-learning and instructions.' },
  { id: 'fenrir', description: 'Excitable male voice full of energy; suits gaming, sports and hype clips.' },
  { id: 'gacrux', description: 'Mature female voice, rich and composed; suits corporate and heritage storytelling.' },
  {
    id: 'iapetus',
    description:
      'Clear male voice with a neutral accent; suits explainers and product demos. Also accepted as "lapetus".',
  },
  { id: 'kore', description: 'Firm female voice; assertive and confident, suits announcements and calls to action.' },
  { id: 'laomedeia', description: 'Upbeat female voice; cheerful and lively, suits kids content and promotions.' },
  { id: 'leda', description: 'Youthful female voice; fresh and playful, suits social media and animation.' },
  { id: 'orus', description: 'Firm, resonant male voice; authoritative, suits trailers and serious narration.' },
  { id: 'puck', description: 'Upbeat male voice; playful and quick, suits comedy skits and ads.' },
  {
    id: 'pulcherrima',
    description: 'Forward, expressive female voice; projects well, suits presentations and hosting.',
  },
  { id: 'rasalgethi', description: 'Informative male voice; articulate and steady, suits tutorials and reports.' },
  { id: 'sadachbia', description: 'Lively male voice; animated and fun, suits reactions and short-form video.' },
  { id: 'sadaltager', description: 'Knowledgeable male voice; calm and expert, suits science and finance explainers.' },
  { id: 'schedar', description: 'Even, balanced male voice; neutral and clean, suits audiobooks and long reads.' },
  { id: 'sulafat', description: 'Warm female voice; kind and inviting, suits family, food and home content.' },
  { id: 'umbriel', description: 'Easy-going male voice; relaxed and natural, suits podcasts and vlogs.' },
  {
    id: 'vindemiatrix',
    description: 'Gentle female voice; soothing and patient, suits bedtime stories and care content.',
  },
  { id: 'zephyr', description: 'Bright female voice; crisp and energetic, suits ads, intros and social clips.' },
  {
    id: 'zubenelgenubi',
    description: 'Casual male voice; laid-back and conversational, suits street interviews and UGC.',
  },
];

const IDS: ReadonlySet<string> = new Set(SANDBOX_STRING_VOICES.map((v) => v.id));

/** Misspellings clients send for a real id; the contract accepts `lapetus` for `iapetus`. */
const ALIASES: Readonly<Record<string, string>> = { lapetus: 'iapetus' };

/** The canonical id of a string-id voice (alias resolved), or undefined when it is none of the 30. */
export function normaliseStringVoice(id: string): string | undefined {
  const canonical = ALIASES[id] ?? id;
  return IDS.has(canonical) ? canonical : undefined;
}

/** `achernar` → `Achernar`. */
export const voiceDisplayName = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);
