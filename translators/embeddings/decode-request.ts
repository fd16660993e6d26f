import * as v from 'valibot';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { requestObject } from '../common/request-fields.ts';
import { invalid, isSet, nonEmptyText, parseAt } from '../common/validation.ts';
import type { CanonicalEmbeddingRequest, EmbeddingEncoding, EmbeddingInput } from './embedding-types.ts';

/**
 * `POST /v1/embeddings` bodies as OpenAI's API reference and the `openai` SDK's
 * `EmbeddingCreateParams` describe them: `input` is a string, an array of strings, an array of
 * token ids, or an array of such arrays; at most 2,048 inputs, none empty.
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */
export const MAX_EMBEDDING_INPUTS = 2048;
/** Token ids are vocabulary indices: any id above this is not a token of any tokenizer. */
const MAX_TOKEN_ID = 2 ** 31 - 1;
const KNOWN_FIELDS = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);

export const RequestSchema = v.looseObject({
  model: nonEmptyText(),
  input: v.union([v.string(), v.array(v.unknown())], 'must be a string, an array of strings or an array of token ids'),
  encoding_format: v.nullish(v.picklist(['float', 'base64'], 'must be float or base64')),
  dimensions: v.nullish(
    v.pipe(
      v.number('must be an integer'),
      v.integer('must be an integer'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(65_536, 'must be at most 65536'),
    ),
  ),
  user: v.nullish(v.string('must be a string')),
});

const tokenId = v.pipe(
  v.number('must be a token id (an integer)'),
  v.integer('must be a token id (an integer)'),
  v.minValue(0, 'must be a token id (0 or more)'),
  v.maxValue(MAX_TOKEN_ID, `must be a token id (at most ${MAX_TOKEN_ID})`),
);
/** OpenAI's bound on the tokens of one embeddings request: no single input can hold more. */
const MAX_TOKENS = 300_000;
const tokenArray = v.pipe(
  v.array(tokenId, 'must be an array of token ids'),
  v.nonEmpty('must not be empty'),
  v.maxLength(MAX_TOKENS, `must hold at most ${MAX_TOKENS} token ids`),
);

function decodeInputs(input: string | unknown[]): EmbeddingInput[] {
  if (typeof input === 'string') {
    if (!input) invalid('input', 'must not be empty');
    return [{ type: 'text', text: input }];
  }
  if (input.length === 0) invalid('input', 'must not be empty');
  // An array of numbers is one tokenized input (its length is tokens, not inputs); otherwise
  // every item is an input of its own.
  if (typeof input[0] === 'number') return [{ type: 'tokens', tokens: parseAt(tokenArray, input, 'input') }];
  if (input.length > MAX_EMBEDDING_INPUTS) invalid('input', `must hold at most ${MAX_EMBEDDING_INPUTS} inputs`);
  // As in OpenAI's API, one batch is all texts or all token arrays.
  const texts = typeof input[0] === 'string';
  return input.map((item, i): EmbeddingInput => {
    if (texts !== (typeof item === 'string')) invalid(`input[${i}]`, 'must not mix texts and token arrays');
    if (typeof item === 'string') {
      if (!item) invalid(`input[${i}]`, 'must not be empty');
      return { type: 'text', text: item };
    }
    if (Array.isArray(item)) return { type: 'tokens', tokens: parseAt(tokenArray, item, `input[${i}]`) };
    return invalid(`input[${i}]`, 'must be a string or an array of token ids');
  });
}

export interface DecodedEmbeddingRequest {
  request: CanonicalEmbeddingRequest;
  /** How the client wants its vectors back. */
  encoding: EmbeddingEncoding;
}

/** A client's `POST /v1/embeddings` body → the canonical request; unknown fields are dropped with a warning. */
export function decodeEmbeddingRequest(body: unknown): Translated<DecodedEmbeddingRequest> {
  const obj = requestObject(body);
  const req = parseAt(RequestSchema, obj, '');
  const warnings: TranslationWarning[] = [];
  for (const field of Object.keys(obj))
    if (!KNOWN_FIELDS.has(field) && isSet(obj[field]))
      warnings.push({
        type: 'unsupported-setting',
        field: field.length > 100 ? `${field.slice(0, 100)}…` : field,
        message: 'not an embeddings setting; ignored',
      });
  const request: CanonicalEmbeddingRequest = { model: req.model, inputs: decodeInputs(req.input) };
  if (isSet(req.dimensions)) request.dimensions = req.dimensions ?? undefined;
  if (isSet(req.user)) request.user = req.user ?? undefined;
  return { value: { request, encoding: req.encoding_format ?? 'float' }, warnings };
}
