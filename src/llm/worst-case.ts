import type { CanonicalRequest } from '../../translators/canonical/index.ts';
import type { UncountedInput } from '../../translators/passthrough/index.ts';
import type { ModelConfig } from '../config/gateway-config.ts';
import { toUnits } from '../accounts/money.ts';
import { worstInputPrice } from './pricing.ts';
import { toolCallsHoldUsd } from './tool-call-hold.ts';

/** Output ceiling of a model that declares neither `max_output` nor `context_length`. */
const DEFAULT_MAX_OUTPUT = 32_768;
/** Tokens held for one image part: above what the vision models we know bill for one tile set. */
const IMAGE_TOKENS = 2_000;
/** Per-message framing tokens (role markers), generous. */
const MESSAGE_TOKENS = 8;
/**
 * Tokens held for one file (a PDF) of a model that declares no `context_length`: a hundred pages
 * at 3,000 tokens, above what a page costs (its text plus a picture of it) on the vision models
 * we know, and a hundred pages the most a request may carry on them.
 */
const FILE_TOKENS = 300_000;

/**
 * An upper bound on the request's input tokens without a tokenizer: every token of the usual
 * byte-level tokenizers covers at least one UTF-8 byte, so the text's byte count bounds them.
 */
export function worstCaseInputTokens(request: CanonicalRequest): number {
  let tokens = 0;
  for (const message of request.messages) {
    tokens += MESSAGE_TOKENS;
    for (const part of message.content) {
      if (part.type === 'text') tokens += Buffer.byteLength(part.text);
      else if (part.type === 'image') tokens += IMAGE_TOKENS;
      else if (part.type === 'tool-call') tokens += Buffer.byteLength(part.name) + Buffer.byteLength(part.arguments);
      else if (part.type === 'reasoning')
        tokens +=
          Buffer.byteLength(part.text) +
          Buffer.byteLength(part.redacted ?? '') +
          Buffer.byteLength(part.signature ?? '');
      else
        for (const inner of part.content)
          tokens += inner.type === 'text' ? Buffer.byteLength(inner.text) : IMAGE_TOKENS;
    }
  }
  if (request.tools?.length) tokens += Buffer.byteLength(JSON.stringify(request.tools));
  // A JSON schema the answer must follow is read as input too (the upstreams bill it).
  if (request.responseFormat?.type === 'json-schema')
    tokens += Buffer.byteLength(JSON.stringify(request.responseFormat));
  return tokens;
}

/**
 * The output tokens a call may produce: its `max_tokens` up to the model's ceiling (an upstream
 * never writes more than its model can, whatever a client asks: `max_tokens: 1e308` holds the ceiling).
 */
export function worstCaseOutputTokens(request: CanonicalRequest, model: ModelConfig): number {
  const ceiling = model.max_output ?? model.context_length ?? DEFAULT_MAX_OUTPUT;
  return request.maxTokens !== undefined && request.maxTokens < ceiling
    ? Math.max(0, Math.ceil(request.maxTokens))
    : ceiling;
}

export interface Hold {
  units: bigint;
  inputTokens: number;
  outputTokens: number;
  /** Held for calls to built-in tools billed per call (src/llm/tool-call-hold.ts). */
  toolCallsUsd: number;
}

/**
 * The hold for a number of input and output tokens at the model's prices, plus `extraUsd`, in
 * 1e-10 USD units.
 */
export function holdUnits(inputTokens: number, outputTokens: number, model: ModelConfig, extraUsd = 0): bigint {
  const p = model.pricing;
  const usd =
    (inputTokens * worstInputPrice(p) + outputTokens * (p?.output_per_mtok ?? 0)) / 1_000_000 +
    (p?.per_request ?? 0) +
    extraUsd;
  // One unit up, so float rounding can never make the hold fall short of the priced cost.
  return toUnits(usd) + 1n;
}

/**
 * The input bound of a passed-through call: the canonical request's, plus what the body sends
 * beyond it (`uncounted`). A file's pages cost more than any byte count says, but never more than
 * the model's context window, which bounds the whole input; without one, `FILE_TOKENS` a file.
 */
export function passthroughInputTokens(
  request: CanonicalRequest,
  uncounted: UncountedInput,
  model: ModelConfig,
): number {
  const tokens = worstCaseInputTokens(request) + uncounted.textTokens + uncounted.images * IMAGE_TOKENS;
  if (!uncounted.files) return tokens;
  return model.context_length ? Math.max(tokens, model.context_length) : tokens + uncounted.files * FILE_TOKENS;
}

/**
 * What admission reserves for a call: its worst case at the model's prices; a passed-through
 * body's parts the canonical request lacks (`uncounted`) held too.
 */
export function worstCaseHold(request: CanonicalRequest, model: ModelConfig, uncounted?: UncountedInput): Hold {
  const inputTokens = uncounted ? passthroughInputTokens(request, uncounted, model) : worstCaseInputTokens(request);
  const outputTokens = worstCaseOutputTokens(request, model);
  const toolCallsUsd = toolCallsHoldUsd(uncounted?.perCallTools, model);
  return { units: holdUnits(inputTokens, outputTokens, model, toolCallsUsd), inputTokens, outputTokens, toolCallsUsd };
}

/** The largest `max_tokens` whose hold `availableUnits` covers (0 when not even the input fits), for the 402 message. */
export function affordableOutputTokens(availableUnits: bigint, hold: Hold, model: ModelConfig): number {
  const held = (outputTokens: number) => holdUnits(hold.inputTokens, outputTokens, model, hold.toolCallsUsd);
  if (held(0) > availableUnits) return 0;
  const perToken = model.pricing?.output_per_mtok ?? 0;
  if (perToken === 0) return hold.outputTokens;
  // Estimated in floating point, then corrected against the exact hold.
  let tokens = Math.max(0, Math.floor((Number(availableUnits - held(0)) / 1e10 / perToken) * 1_000_000));
  while (tokens > 0 && held(tokens) > availableUnits) tokens--;
  return Math.min(tokens, hold.outputTokens);
}
