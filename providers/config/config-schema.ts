import * as v from 'valibot';

/**
 * The config file's provider and model entries: what every provider adapter reads, kept in this
 * leaf module so providers/ never imports the service (src/) that loads the file.
 */
const slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]*$/, 'expected a lowercase slug'));
/**
 * A price in USD: finite and at most a million (per million tokens, per image, per call…). An
 * infinite or absurd price was accepted and made every call of its model a 500 (its hold has no
 * amount in units).
 */
const nonNegative = v.pipe(v.number(), v.minValue(0), v.maxValue(1_000_000, 'must be at most 1000000 (USD)'));
/** Token counts: a hundred million is past any model's window. */
const tokenCount = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000_000, 'must be at most 100000000'));
/** Milliseconds a timer waits: at most a day (Bun's timers fire at once past 2^31 − 1 ms). */
export const MAX_TIMER_SETTING_MS = 86_400_000;

export const PricingSchema = v.object({
  input_per_mtok: v.optional(nonNegative),
  output_per_mtok: v.optional(nonNegative),
  /** Input tokens read from a prompt cache; default `input_per_mtok` (docs/protocol-mapping.md). */
  cache_read_per_mtok: v.optional(nonNegative),
  /** Input tokens written to a prompt cache; default `input_per_mtok`. */
  cache_write_per_mtok: v.optional(nonNegative),
  /**
   * Input tokens written to a prompt cache kept for an hour (Anthropic's `ttl: "1h"`, twice the
   * input price where its 5-minute writes are 1.25 times); default `cache_write_per_mtok`.
   */
  cache_write_1h_per_mtok: v.optional(nonNegative),
  per_request: v.optional(nonNegative),
  /**
   * USD per call of an upstream's built-in tool, by tool (`web_search`, `code_interpreter`,
   * `image_generation`…): what the provider bills per call on top of tokens. A passed-through
   * request may use such a tool only on a model that prices it (docs/money.md).
   */
  per_tool_call: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), nonNegative)),
  per_image: v.optional(nonNegative),
  per_second: v.optional(nonNegative),
  per_1k_chars: v.optional(nonNegative),
  minimum: v.optional(nonNegative),
});

export const ProviderSchema = v.object({
  id: slug,
  /** A kind of providers/registry.ts (`openai`, `openai-responses`, `anthropic`, …), checked at start. */
  kind: v.pipe(v.string(), v.minLength(1)),
  display_name: v.optional(v.string()),
  base_url: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
  api_key: v.optional(v.string()),
  /** Upstream failures before the first byte are retried this many times. */
  max_retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10))),
  timeout_ms: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(100),
      v.maxValue(MAX_TIMER_SETTING_MS, 'must be at most 86400000 (a day)'),
    ),
  ),
  /** Seconds a deployment of this provider is skipped after consecutive failures (docs/routing.md). */
  cooldown_s: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400))),
  /** A stream whose upstream sends nothing for this long ends with the format's error event. */
  stream_idle_timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(3_600_000))),
  options: v.optional(v.record(v.string(), v.unknown())),
});

const weight = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000));

/** One more upstream serving a model (docs/routing.md): another provider, its own model name. */
export const DeploymentSchema = v.object({
  provider: slug,
  upstream_model: v.optional(v.pipe(v.string(), v.minLength(1))),
  weight: v.optional(weight),
});

export const ModelSchema = v.object({
  id: v.pipe(
    v.string(),
    v.regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'expected <provider>/<model-name>'),
  ),
  category: v.picklist(['llm', 'embedding', 'image', 'video', 'audio']),
  upstream_model: v.optional(v.string()),
  display_name: v.pipe(v.string(), v.minLength(1)),
  created: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  context_length: v.optional(tokenCount),
  max_output: v.optional(tokenCount),
  pricing: v.optional(PricingSchema),
  options: v.optional(v.record(v.string(), v.unknown())),
  /** Weight of the model's own provider among its deployments (default 1). */
  weight: v.optional(weight),
  deployments: v.optional(v.pipe(v.array(DeploymentSchema), v.maxLength(32))),
  /** Models tried in order once every deployment failed. */
  fallbacks: v.optional(v.pipe(v.array(v.string()), v.maxLength(16))),
  /** Exact response cache TTL applied when the request does not say (docs/routing.md). */
  cache_ttl_s: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(2_592_000))),
});

export type ProviderConfig = v.InferOutput<typeof ProviderSchema> & { missingEnv: string[] };
export type ModelConfig = v.InferOutput<typeof ModelSchema>;
export type DeploymentConfig = v.InferOutput<typeof DeploymentSchema>;
export type Pricing = v.InferOutput<typeof PricingSchema>;
