import { MOTION_CATEGORIES, PHRASE_LANGUAGES } from '../../providers/shared/resources.ts';
import { DEFAULT_MOTION_SIZE, MAX_MOTION_SIZE } from './resource-requests.ts';
import { MAX_SAMPLES } from './keep-voice-samples.ts';

/** OpenAPI paths of provider resources (docs/api-contract.md); `{vendor}` is a provider id. */
const json = (schema: unknown) => ({ 'application/json': { schema } });
const envelope = (data: unknown) => ({
  type: 'object',
  required: ['success', 'code', 'data'],
  properties: { success: { type: 'boolean' }, code: { type: 'integer' }, data },
});
const ok = (description: string, data: unknown) => ({ description, content: json(envelope(data)) });
const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      { description: `error ${c}`, content: json({ $ref: '#/components/schemas/ErrorEnvelope' }) },
    ]),
  );
const path = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const str = { type: 'string' };
const array = (properties: Record<string, unknown>) => ({ type: 'array', items: { type: 'object', properties } });
const motionError = {
  type: 'object',
  properties: { code: { type: 'integer' }, error: { type: 'object', properties: { message: str, code: str } } },
};
const motions = {
  get: {
    summary: 'Motion presets (cached 30 minutes)',
    parameters: [
      {
        name: 'size',
        in: 'query',
        schema: { type: 'integer', minimum: 1, maximum: MAX_MOTION_SIZE, default: DEFAULT_MOTION_SIZE },
      },
      { name: 'category', in: 'query', schema: { enum: [...MOTION_CATEGORIES] } },
      {
        name: 'search',
        in: 'query',
        schema: { type: 'string', maxLength: 100 },
        description: 'case-insensitive part of the preset name',
      },
    ],
    responses: {
      200: ok('presets', array({ id: { type: 'string', format: 'uuid' }, name: str, category: str })),
      400: { description: 'invalid_category, invalid_size or invalid_search', content: json(motionError) },
      ...errors(401, 404),
    },
  },
};

export const resourceOpenApiPaths: Record<string, unknown> = {
  '/v1/resources/{vendor}/{product}/voices': {
    get: {
      summary: 'Integer-id video voice presets',
      parameters: [path('vendor'), path('product')],
      responses: { 200: ok('voices', array({ id: { type: 'integer' }, name: str })), ...errors(401, 404) },
    },
  },
  '/v1/resources/{vendor}/voices/{model_family}': {
    get: {
      summary: 'String-id video voice presets',
      parameters: [path('vendor'), path('model_family')],
      responses: {
        200: ok('voices', array({ id: str, name: str, description: str, sample: { type: 'string', format: 'uri' } })),
        ...errors(401, 404),
      },
    },
  },
  '/v1/resources/{vendor}/voices': {
    get: {
      summary: 'Speech voices (custom voices are never listed)',
      parameters: [path('vendor')],
      responses: {
        200: ok('voices', {
          type: 'object',
          properties: {
            voices: array({
              voice_id: str,
              name: str,
              category: str,
              labels: { type: 'object', properties: { accent: str, age: str, gender: str } },
              preview_url: str,
            }),
          },
        }),
        ...errors(401, 404),
      },
    },
    post: {
      summary: 'Create a custom voice from recordings of one speaker; copies of the samples are kept',
      parameters: [path('vendor')],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['samples'],
          properties: {
            samples: {
              type: 'array',
              minItems: 1,
              maxItems: MAX_SAMPLES,
              items: { type: 'string', format: 'uri' },
              description:
                'direct-download URLs (no redirects), at most 25 MB each: mp3, wav, ogg, opus, m4a, flac or webm',
            },
            name: { type: 'string', maxLength: 100 },
          },
        }),
      },
      responses: {
        200: ok('the voice (its id is shown only here)', {
          type: 'object',
          properties: { voice_id: str, name: str, samples: { type: 'array', items: str } },
        }),
        ...errors(401, 404, 422),
      },
    },
  },
  '/v1/resources/{vendor}/voice/verification-phrase': {
    get: {
      summary: 'A phrase to read aloud for voice verification',
      parameters: [
        path('vendor'),
        { name: 'language', in: 'query', schema: { enum: [...PHRASE_LANGUAGES], default: 'en' } },
      ],
      responses: {
        200: ok('phrase', { type: 'object', properties: { phrase_id: str, phrase_text: str } }),
        ...errors(401, 404, 422),
      },
    },
  },
  '/v1/resources/{vendor}/samples/{name}': {
    get: {
      summary: 'A voice preset recording (sample, preview_url); no key needed',
      security: [],
      parameters: [path('vendor'), path('name')],
      responses: { 200: { description: 'the audio' }, 404: { description: 'no such sample' } },
    },
  },
  '/{product}/motions': motions,
  '/v1/{product}/motions': motions,
};
