import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './config-error.ts';
import { formatIssues } from '../http/validation.ts';
import { SANDBOX_CONFIG } from './sandbox-catalog.ts';
import { checkMediaOptions } from '../../providers/shared/config-media-model.ts';

const slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]*$/, 'expected a lowercase slug'));
const nonNegative = v.pipe(v.number(), v.minValue(0));

const PricingSchema = v.object({
  input_per_mtok: v.optional(nonNegative),
  output_per_mtok: v.optional(nonNegative),
  per_request: v.optional(nonNegative),
  per_image: v.optional(nonNegative),
  per_second: v.optional(nonNegative),
  per_1k_chars: v.optional(nonNegative),
  minimum: v.optional(nonNegative),
});

const ProviderSchema = v.object({
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

const ModelSchema = v.object({
  id: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'expected <provider>/<model-name>')),
  category: v.picklist(['llm', 'image', 'video', 'audio']),
  upstream_model: v.optional(v.string()),
  display_name: v.pipe(v.string(), v.minLength(1)),
  created: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  context_length: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  max_output: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  pricing: v.optional(PricingSchema),
  options: v.optional(v.record(v.string(), v.unknown())),
});

const GatewayConfigSchema = v.object({
  providers: v.array(ProviderSchema),
  models: v.array(ModelSchema),
  rate_limit_per_minute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

export type ProviderConfig = v.InferOutput<typeof ProviderSchema> & { missingEnv: string[] };
export type ModelConfig = v.InferOutput<typeof ModelSchema>;
export type Pricing = v.InferOutput<typeof PricingSchema>;
export interface GatewayConfig {
  providers: ProviderConfig[];
  models: ModelConfig[];
  rateLimitPerMinute?: number;
}

/** `${NAME}` references are filled from the environment; unset ones are recorded, not fatal. */
function substituteEnv(value: unknown, env: Record<string, string | undefined>, missing: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) missing.push(name);
      return found ?? '';
    });
  }
  if (Array.isArray(value)) return value.map((item) => substituteEnv(item, env, missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, substituteEnv(item, env, missing)]));
  }
  return value;
}

export function parseGatewayConfig(raw: unknown, env: Record<string, string | undefined>, source: string): GatewayConfig {
  const parsed = v.safeParse(GatewayConfigSchema, raw);
  if (!parsed.success) throw new ConfigError(`${source}: ${formatIssues(parsed.issues)}`);
  const cfg = parsed.output;
  const providers = cfg.providers.map((provider) => {
    const missingEnv: string[] = [];
    const filled = substituteEnv(provider, env, missingEnv) as typeof provider;
    return { ...filled, missingEnv };
  });
  const providerIds = new Set<string>();
  providers.forEach((p, i) => {
    if (providerIds.has(p.id)) throw new ConfigError(`${source}: providers[${i}].id: duplicate provider "${p.id}"`);
    providerIds.add(p.id);
  });
  const modelIds = new Set<string>();
  cfg.models.forEach((m, i) => {
    const providerId = m.id.split('/')[0] ?? '';
    if (!providerIds.has(providerId)) {
      throw new ConfigError(`${source}: models[${i}].id: provider "${providerId}" is not declared in providers`);
    }
    if (modelIds.has(m.id)) throw new ConfigError(`${source}: models[${i}].id: duplicate model "${m.id}"`);
    modelIds.add(m.id);
    if (m.category === 'llm' && (m.pricing?.input_per_mtok === undefined || m.pricing.output_per_mtok === undefined)) {
      throw new ConfigError(`${source}: models[${i}].pricing: llm models need input_per_mtok and output_per_mtok`);
    }
    if (m.category !== 'llm') {
      try {
        checkMediaOptions(m.options, `models[${i}].options`);
      } catch (err) {
        throw err instanceof ConfigError ? new ConfigError(`${source}: ${err.message}`) : err;
      }
    }
  });
  return { providers, models: cfg.models, rateLimitPerMinute: cfg.rate_limit_per_minute };
}

/** Loads `GATEWAY_CONFIG` (YAML or JSON) or the built-in sandbox catalog. */
export async function loadGatewayConfig(path: string | undefined, env: Record<string, string | undefined>): Promise<GatewayConfig> {
  if (!path) return parseGatewayConfig(SANDBOX_CONFIG, env, 'built-in sandbox catalog');
  const file = Bun.file(path);
  if (!(await file.exists())) throw new ConfigError(`GATEWAY_CONFIG: file not found: ${path}`);
  const text = await file.text();
  let raw: unknown;
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`GATEWAY_CONFIG: ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`);
  }
  return parseGatewayConfig(raw, env, path);
}
