import type { ProviderConfig, ModelConfig } from '../config/config-schema.ts';
import { OCTET_STREAM, SNIFF_BYTES, sniffContentType } from '../common/sniff-content-type.ts';
import { configuredMedia } from '../common/config-media-model.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import type { UpstreamHealth } from '../common/upstream-health.ts';
import { jsonBody, upstreamRequest } from '../common/upstream-request.ts';
import type { MediaModel, MediaOutput } from '../types.ts';
import { deadlineOption, withMediaDefaults } from '../common/media-defaults.ts';
import { UpstreamAnswerError, syncMediaModel } from '../common/media-sync-job.ts';

/**
 * The client's `input` when the config declares none: the documented body of
 * `POST /images/generations` minus `model` (the gateway's) and streaming (a task needs the
 * finished images). Fields not named here pass through unchecked.
 * @see https://platform.openai.com/docs/api-reference/images/create
 */
export const OPENAI_IMAGE_INPUT = {
  prompt: { type: 'string', required: true, min_length: 1, max_length: 32000 },
  n: { type: 'integer', min: 1, max: 10, default: 1 },
  size: { type: 'string' },
  quality: { type: 'string', enum: ['auto', 'low', 'medium', 'high', 'standard', 'hd'] },
  background: { type: 'string', enum: ['auto', 'transparent', 'opaque'] },
  output_format: { type: 'string', enum: ['png', 'jpeg', 'webp'] },
  output_compression: { type: 'integer', min: 0, max: 100 },
  moderation: { type: 'string', enum: ['auto', 'low'] },
  style: { type: 'string', enum: ['vivid', 'natural'] },
  response_format: { type: 'string', enum: ['url', 'b64_json'] },
} as const;

/** One entry of `data[]`: GPT image models answer `b64_json` only; DALL·E a `url` by default. */
interface ImageItem {
  b64_json?: unknown;
  url?: unknown;
}

/**
 * `POST {base_url}/images/generations`. Each image of `data[]` becomes one output: base64 is
 * decoded to bytes whose type is sniffed; a URL (valid for an hour upstream) is copied into the
 * gateway's storage by the task runner. Several images become `image_url` + `image_urls`, and
 * `per_image` pricing refunds the images asked for but not made.
 * @see https://platform.openai.com/docs/api-reference/images/create
 * @see https://platform.openai.com/docs/api-reference/images/object
 */
export function openAIImageModel(provider: ProviderConfig, model: ModelConfig, health?: UpstreamHealth): MediaModel {
  const configured = configuredMedia(withMediaDefaults(model, { input: OPENAI_IMAGE_INPUT, count_field: 'n' }));
  const url = `${baseUrl(provider, 'https://api.openai.com/v1')}/images/generations`;
  const headers: Record<string, string> = provider.api_key ? { authorization: `Bearer ${provider.api_key}` } : {};
  const policy = retryPolicy(provider);

  return syncMediaModel({
    label: provider.id,
    configured,
    deadlineMs: deadlineOption(model),
    async run(job) {
      const body = {
        ...configured.upstreamInput(job.input),
        model: job.model.upstreamModel,
        stream: undefined,
        partial_images: undefined,
      };
      const res = await upstreamRequest({ method: 'POST', url, headers, body, policy, signal: job.signal, health });
      const answer = await jsonBody<{ data?: unknown; output_format?: unknown }>(res);
      const items = Array.isArray(answer.data) ? (answer.data as ImageItem[]) : [];
      const fallbackType = typeof answer.output_format === 'string' ? `image/${answer.output_format}` : 'image/png';
      const outputs = items.map((item, i) => imageOutput(item, i, fallbackType));
      if (outputs.length === 0) throw new UpstreamAnswerError('the upstream answered without any image');
      return outputs;
    },
  });
}

function imageOutput(item: ImageItem, index: number, fallbackType: string): MediaOutput {
  if (typeof item?.b64_json === 'string' && item.b64_json.length > 0) {
    const body = new Uint8Array(Buffer.from(item.b64_json, 'base64'));
    const sniffed = sniffContentType(body.subarray(0, SNIFF_BYTES));
    return { kind: 'image', body, contentType: sniffed === OCTET_STREAM ? fallbackType : sniffed };
  }
  if (typeof item?.url === 'string' && item.url.length > 0) return { kind: 'image', url: item.url };
  throw new UpstreamAnswerError(`the upstream's image ${index} has neither b64_json nor url`);
}
