import * as v from 'valibot';

/**
 * The config file's provider and model entries: what every provider adapter reads, kept in this
 * leaf module so providers/ never imports the service (src/) that loads the file.
 */
const slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]*$/, 'expected a lowercase slug'));
const nonNegative = v.pipe(v.number(), v.minValue(0));

export const PricingSchema = v.object({
  input_per_mtok: v.optional(nonNegative),
  output_per_mtok: v.optional(nonNegative),
  /** Input tokens read from a prompt cache; default `input_per_mtok` (docs/protocol-mapping.md). */
  cache_read_per_mtok: v.optional(nonNegative),
  /** Input tokens written to a prompt cache; default `input_per_mtok`. */
  cache_write_per_mtok: v.optional(nonNegative),
  per_request: v.optional(nonNegative),
  per_image: v.optional(nonNegative),
  per_second: v.optional(nonNegative),
  per_1k_chars: v.optional(nonNegative),
  minimum: v.optional(nonNegative),
});

export const ProviderSchema = v.object({
  id: slug,
  kind: v.pipe(v.string(), v.minLength(1)),
  display_name: v.optional(v.string()),
  base_url: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
  api_key: v.optional(v.string()),
  /** Upstream failures before the first byte are retried this many times. */
  max_retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10))),
  timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100))),
  options: v.optional(v.record(v.string(), v.unknown())),
});

export const ModelSchema = v.object({
  id: v.pipe(
    v.string(),
    v.regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'expected <provider>/<model-name>'),
  ),
  category: v.picklist(['llm', 'image', 'video', 'audio']),
  upstream_model: v.optional(v.string()),
  display_name: v.pipe(v.string(), v.minLength(1)),
  created: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  context_length: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  max_output: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  pricing: v.optional(PricingSchema),
  options: v.optional(v.record(v.string(), v.unknown())),
});

export type ProviderConfig = v.InferOutput<typeof ProviderSchema> & { missingEnv: string[] };
export type ModelConfig = v.InferOutput<typeof ModelSchema>;
export type Pricing = v.InferOutput<typeof PricingSchema>;
