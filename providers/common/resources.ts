/**
 * Provider resources (docs/api-contract.md): voice presets, motion presets, custom voices and
 * verification phrases. A provider declares the ones it has as handlers; the gateway maps the
 * API contract's paths onto them by vendor slug (= provider id) and owns validation, caching, storage and
 * the custom-voice records. Result shapes are the API contract's, field names included.
 */

type Awaitable<T> = T | Promise<T>;

/** Video voice preset, integer-id kind. */
export interface IntegerVoice {
  id: number;
  name: string;
}

/** Video voice preset, string-id kind; `sample` is a playable recording of the voice. */
export interface StringVoice {
  id: string;
  name: string;
  description: string;
  sample: string;
}

/** Speech voice (`data.voices[]`). */
export interface SpeechVoice {
  voice_id: string;
  name: string;
  category: string;
  labels: { accent: string; age: string; gender: string };
  preview_url: string;
}

export interface VerificationPhrase {
  phrase_id: string;
  phrase_text: string;
}

export const MOTION_CATEGORIES = ['new', 'star_end_frame', 'camera_control', 'viral', 'vfx', 'ugc'] as const;
export type MotionCategory = (typeof MOTION_CATEGORIES)[number];

export interface MotionPreset {
  /** UUID, stable: clients keep it and send it back as a task's `motion_id`. */
  id: string;
  name: string;
  category: MotionCategory;
}

export interface MotionQuery {
  /** How many presets at most. */
  size: number;
  category?: MotionCategory;
  /** Case-insensitive part of the name. */
  search?: string;
}

export const PHRASE_LANGUAGES = ['zh', 'en', 'es', 'fr', 'pt', 'de', 'ja', 'ko', 'hi', 'ru'] as const;
export type PhraseLanguage = (typeof PHRASE_LANGUAGES)[number];

/** A voice sample the gateway downloaded, checked to be audio and keeps for good. */
export interface KeptSample {
  url: string;
  contentType: string;
  /** The kept bytes, read from the gateway's storage: for providers that upload samples upstream. */
  read?(): Promise<ReadableStream<Uint8Array> | undefined>;
}

export interface CustomVoiceRequest {
  accountId: number;
  name: string;
  samples: KeptSample[];
}

/** Bytes a provider generates and the gateway serves, e.g. a voice preset's sample recording. */
export interface ResourceAsset {
  body: Uint8Array;
  contentType: string;
}

/** What the gateway gives list handlers: where the provider's assets are served. */
export interface ResourceHost {
  /** Public URL of `asset(name)`. */
  assetUrl(name: string): string;
}

/** The resources a provider serves; a missing handler (or an undefined answer) is a 404. */
export interface ProviderResources {
  /** `GET /v1/resources/<id>/<product>/voices`; undefined for a product the provider lacks. */
  listVideoVoices?(product: string): Awaitable<IntegerVoice[] | undefined>;
  /** `GET /v1/resources/<id>/voices/<model-family>`; undefined for an unknown family. */
  listStringVoices?(family: string, host: ResourceHost): Awaitable<StringVoice[] | undefined>;
  /** `GET /v1/resources/<id>/voices`: the built-in speech voices (never custom ones). */
  listSpeechVoices?(host: ResourceHost): Awaitable<SpeechVoice[]>;
  /** `POST /v1/resources/<id>/voices`: the samples are already kept; answers the new voice's id. */
  createCustomVoice?(request: CustomVoiceRequest): Promise<{ voice_id: string }>;
  /** `GET /v1/resources/<id>/voice/verification-phrase`. */
  verificationPhrase?(language: PhraseLanguage): Awaitable<VerificationPhrase>;
  /** The product of `GET /<product>/motions`, which names no vendor. */
  motionProduct?: string;
  /** Presets of `motionProduct`, filtered and cut to `size`; the gateway caches the answer. */
  listMotions?(query: MotionQuery): Awaitable<MotionPreset[]>;
  /** An asset named by a URL from `host.assetUrl`; undefined when there is none. */
  asset?(name: string): Awaitable<ResourceAsset | undefined>;
}
