import type { SpeechVoice } from '../common/resources.ts';
import { jsonBody } from '../common/upstream-request.ts';
import type { ElevenLabsApi } from './elevenlabs-api.ts';

/** How long one answer of `GET /v1/voices` is served before it is asked again. */
export const VOICE_LIST_TTL_MS = 5 * 60_000;
const LIST_TIMEOUT_MS = 30_000;

/** The fields of `GetVoicesResponseModel.voices[]` the gateway reads. */
interface UpstreamVoice {
  voice_id?: unknown;
  name?: unknown;
  category?: unknown;
  labels?: Record<string, unknown> | null;
  preview_url?: unknown;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/**
 * The account's voices from `GET /v1/voices`, as the API contract's speech voices. Voices of category
 * `cloned` are left out: the gateway's custom voices are instant clones in this same upstream
 * account, and the contract never lists custom voices (nor lets one account use another's).
 * The list is cached per instance for five minutes, and a stale copy is served while ElevenLabs
 * is unreachable.
 * @see https://elevenlabs.io/docs/api-reference/voices/get-all
 */
export class ElevenLabsVoiceList {
  private cached: { at: number; voices: SpeechVoice[] } | undefined;
  private loading: Promise<SpeechVoice[]> | undefined;

  constructor(
    private readonly api: ElevenLabsApi,
    private readonly opts: { ttlMs?: number; now?: () => number } = {},
  ) {}

  async voices(): Promise<SpeechVoice[]> {
    const now = this.opts.now ?? Date.now;
    if (this.cached && now() - this.cached.at < (this.opts.ttlMs ?? VOICE_LIST_TTL_MS)) return this.cached.voices;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    try {
      return await this.loading;
    } catch (err) {
      if (this.cached) return this.cached.voices;
      throw err;
    }
  }

  /** Whether `voiceId` is one of the listed (non-custom) voices. */
  async has(voiceId: string): Promise<boolean> {
    return (await this.voices()).some((v) => v.voice_id === voiceId);
  }

  private async load(): Promise<SpeechVoice[]> {
    const res = await this.api.request('GET', '/v1/voices', { signal: AbortSignal.timeout(LIST_TIMEOUT_MS) });
    const body = await jsonBody<{ voices?: unknown }>(res);
    const voices = (Array.isArray(body.voices) ? (body.voices as UpstreamVoice[]) : [])
      .filter((v) => typeof v?.voice_id === 'string' && v.voice_id !== '' && v.category !== 'cloned')
      .map((v) => toSpeechVoice(v));
    this.cached = { at: (this.opts.now ?? Date.now)(), voices };
    return voices;
  }
}

function toSpeechVoice(v: UpstreamVoice): SpeechVoice {
  const labels = v.labels ?? {};
  return {
    voice_id: text(v.voice_id),
    name: text(v.name),
    category: text(v.category),
    labels: { accent: text(labels.accent), age: text(labels.age), gender: text(labels.gender) },
    preview_url: text(v.preview_url),
  };
}
