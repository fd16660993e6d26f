import { ProviderRequestError, invalidProviderInput } from '../common/provider-request-error.ts';
import { extensionFor } from '../common/file-extension.ts';
import type { CustomVoiceRequest, KeptSample } from '../common/resources.ts';
import { UpstreamError } from '../common/upstream-error.ts';
import { jsonBody } from '../common/upstream-request.ts';
import type { ElevenLabsApi } from './elevenlabs-api.ts';

/**
 * `POST /v1/resources/<provider>/voices` on ElevenLabs: the gateway has already downloaded the
 * client's samples (SSRF-checked, audio by content) and kept copies; those copies are uploaded
 * to instant voice cloning (`POST /v1/voices/add`, multipart `name` + `files`), and ElevenLabs'
 * own `voice_id` is the id the client gets — once, and usable only by that account (the
 * gateway's `custom_voices` row; cloned voices are never listed).
 * @see https://elevenlabs.io/docs/api-reference/voices/ivc/create
 */
export async function cloneVoice(
  api: ElevenLabsApi,
  request: CustomVoiceRequest,
  opts: { removeBackgroundNoise: boolean },
): Promise<{ voice_id: string }> {
  const signal = AbortSignal.timeout(10 * 60_000);
  const form = new FormData();
  form.append('name', request.name);
  form.append('description', `Custom voice of gateway account ${request.accountId}`);
  form.append('remove_background_noise', String(opts.removeBackgroundNoise));
  for (const [index, sample] of request.samples.entries()) {
    form.append(
      'files',
      await sampleBlob(sample, index, signal),
      `sample-${index + 1}.${extensionFor(sample.contentType) ?? 'bin'}`,
    );
  }
  let answer: { voice_id?: unknown };
  try {
    answer = await jsonBody<{ voice_id?: unknown }>(await api.upload('/v1/voices/add', form, signal));
  } catch (err) {
    throw cloneError(err);
  }
  if (typeof answer.voice_id !== 'string' || answer.voice_id === '')
    throw new ProviderRequestError(502, 'elevenlabs: the voice clone answer has no voice_id');
  return { voice_id: answer.voice_id };
}

/** The kept copy's bytes: from storage directly, or from its public URL when the host gives no reader. */
async function sampleBlob(sample: KeptSample, index: number, signal: AbortSignal): Promise<Blob> {
  const stream = sample.read ? await sample.read() : (await fetch(sample.url, { signal })).body;
  if (!stream) throw new ProviderRequestError(500, `samples[${index}]: the kept copy could not be read`);
  return new Blob([await new Response(stream).arrayBuffer()], { type: sample.contentType });
}

/**
 * ElevenLabs refusing the samples (400/422: too short, unusable audio…) is the client's 422 with
 * its message; anything else (our key, quota, an outage) is a 502.
 */
function cloneError(err: unknown): ProviderRequestError {
  if (err instanceof UpstreamError) {
    if (err.upstreamStatus === 400 || err.upstreamStatus === 422)
      return invalidProviderInput(`samples: elevenlabs could not clone a voice from them: ${err.message}`);
    return new ProviderRequestError(502, `elevenlabs: ${err.message}`);
  }
  if (err instanceof ProviderRequestError) return err;
  return new ProviderRequestError(502, `elevenlabs: ${err instanceof Error ? err.message : String(err)}`);
}
