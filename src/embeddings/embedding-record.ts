import type { CanonicalEmbeddingRequest, EmbeddingEncoding } from '../../translators/embeddings/index.ts';
import { storableString } from '../http/hostile-json.ts';

/** Inputs kept on the task record: enough to recognise the call, never the whole batch. */
const KEPT_INPUTS = 8;
const KEPT_CHARS = 200;

/**
 * The call as its task record shows it: model, settings, the input count and the first inputs
 * shortened (a batch of 2,048 documents must not bloat the tasks table), in a form Postgres can
 * store (NUL and unpaired surrogates replaced).
 */
export function recordableEmbeddingInput(
  request: CanonicalEmbeddingRequest,
  encoding: EmbeddingEncoding,
): Record<string, unknown> {
  const inputs = request.inputs
    .slice(0, KEPT_INPUTS)
    .map((input) =>
      input.type === 'text'
        ? storableString(
            input.text.length > KEPT_CHARS ? `${input.text.slice(0, KEPT_CHARS).toWellFormed()}…` : input.text,
          )
        : `[${input.tokens.length} token ids]`,
    );
  return {
    model: storableString(request.model),
    input: inputs,
    input_count: request.inputs.length,
    encoding_format: encoding,
    ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
  };
}
