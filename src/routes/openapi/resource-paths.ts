import * as v from 'valibot';
import { CustomVoiceBody, LanguageQuery, MotionQuerySchema } from '../../resources/resource-requests.ts';
import { operation } from './operation.ts';
import { envelope, ErrorEnvelope } from './shapes.ts';

const errors = (...codes: number[]) => ({ shape: ErrorEnvelope, codes });
const ok = (description: string, data: v.GenericSchema) => ({ description, schema: envelope(data) });
const list = <T extends v.ObjectEntries>(entries: T) => v.array(v.object(entries));
/** The motion-preset endpoint's own error shape. */
const MotionError = v.object({ code: v.number(), error: v.object({ message: v.string(), code: v.string() }) });
const Vendor = { vendor: v.pipe(v.string(), v.description('a provider id')) };

const motions = {
  get: operation({
    summary: 'Motion presets (cached 30 minutes)',
    path: v.object({ product: v.string() }),
    query: MotionQuerySchema,
    ok: ok('presets', list({ id: v.pipe(v.string(), v.uuid()), name: v.string(), category: v.string() })),
    errors: { shape: MotionError, codes: [400, 401, 404] },
  }),
};

/** Provider resources: voice presets, custom voices, verification phrases, samples, motion presets. */
export const resourceOpenApiPaths: Record<string, unknown> = {
  '/v1/resources/{vendor}/{product}/voices': {
    get: operation({
      summary: 'Integer-id video voice presets',
      path: v.object({ ...Vendor, product: v.string() }),
      ok: ok('voices', list({ id: v.number(), name: v.string() })),
      errors: errors(401, 404),
    }),
  },
  '/v1/resources/{vendor}/voices/{model_family}': {
    get: operation({
      summary: 'String-id video voice presets',
      path: v.object({ ...Vendor, model_family: v.string() }),
      ok: ok(
        'voices',
        list({ id: v.string(), name: v.string(), description: v.string(), sample: v.pipe(v.string(), v.url()) }),
      ),
      errors: errors(401, 404),
    }),
  },
  '/v1/resources/{vendor}/voices': {
    get: operation({
      summary: 'Speech voices (custom voices are never listed)',
      path: v.object(Vendor),
      ok: ok(
        'voices',
        v.object({
          voices: list({
            voice_id: v.string(),
            name: v.string(),
            category: v.string(),
            labels: v.object({ accent: v.string(), age: v.string(), gender: v.string() }),
            preview_url: v.string(),
          }),
        }),
      ),
      errors: errors(401, 404),
    }),
    post: operation({
      summary: 'Create a custom voice from recordings of one speaker; copies of the samples are kept',
      description:
        'samples are direct-download URLs (no redirects), at most 25 MB each: mp3, wav, ogg, opus, m4a, flac or webm.',
      path: v.object(Vendor),
      body: CustomVoiceBody,
      ok: ok(
        'the voice (its id is shown only here)',
        v.object({ voice_id: v.string(), name: v.string(), samples: v.array(v.string()) }),
      ),
      errors: errors(401, 404, 422),
    }),
  },
  '/v1/resources/{vendor}/voice/verification-phrase': {
    get: operation({
      summary: 'A phrase to read aloud for voice verification (English when no language is given)',
      path: v.object(Vendor),
      query: LanguageQuery,
      ok: ok('phrase', v.object({ phrase_id: v.string(), phrase_text: v.string() })),
      errors: errors(401, 404, 422),
    }),
  },
  '/v1/resources/{vendor}/samples/{name}': {
    get: operation({
      summary: 'A voice preset recording (sample, preview_url); no key needed',
      public: true,
      path: v.object({ ...Vendor, name: v.string() }),
      ok: { description: 'the audio' },
      other: { 404: 'no such sample' },
    }),
  },
  '/{product}/motions': motions,
  '/v1/{product}/motions': motions,
};
