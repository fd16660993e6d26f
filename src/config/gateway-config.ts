import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../providers/config/config-error.ts';
import { formatIssues } from '../http/validation.ts';
import { SANDBOX_CONFIG } from './sandbox-catalog.ts';
import { checkMediaOptions } from '../../providers/common/config-media-model.ts';
import { checkRouting } from './routing-config-check.ts';

import {
  ModelSchema,
  ProviderSchema,
  type ModelConfig,
  type Pricing,
  type ProviderConfig,
} from '../../providers/config/config-schema.ts';

export type { ModelConfig, Pricing, ProviderConfig };

const GatewayConfigSchema = v.object({
  providers: v.array(ProviderSchema),
  models: v.array(ModelSchema),
  rate_limit_per_minute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  rate_limit_per_account_per_minute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

export interface GatewayConfig {
  providers: ProviderConfig[];
  models: ModelConfig[];
  rateLimitPerMinute?: number;
  rateLimitPerAccountPerMinute?: number;
}

/**
 * `${NAME}` references are filled from the environment; unset ones are recorded, not fatal: a
 * string that names one is left out (its field takes its default), since its provider is then
 * unconfigured and serves nothing (docs/configuration.md).
 */
function substituteEnv(value: unknown, env: Record<string, string | undefined>, missing: string[]): unknown {
  if (typeof value === 'string') {
    let unset = false;
    const filled = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) {
        missing.push(name);
        unset = true;
      }
      return found ?? '';
    });
    return unset ? undefined : filled;
  }
  if (Array.isArray(value)) return value.map((item) => substituteEnv(item, env, missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .map(([k, item]) => [k, substituteEnv(item, env, missing)] as const)
        .filter(([, item]) => item !== undefined),
    );
  }
  return value;
}

export function parseGatewayConfig(
  raw: unknown,
  env: Record<string, string | undefined>,
  source: string,
): GatewayConfig {
  // References are filled before the entries are checked: what they hold is checked too (a
  // `base_url` of `https://${HOST}/v1` with a HOST that makes no URL stops start-up, naming it).
  const missingEnv: string[][] = [];
  const rawProviders = (raw as { providers?: unknown } | null)?.providers;
  const filledRaw = Array.isArray(rawProviders)
    ? {
        ...(raw as object),
        providers: rawProviders.map((provider) => {
          const missing: string[] = [];
          missingEnv.push(missing);
          return substituteEnv(provider, env, missing);
        }),
      }
    : raw;
  const parsed = v.safeParse(GatewayConfigSchema, filledRaw);
  if (!parsed.success) throw new ConfigError(`${source}: ${formatIssues(parsed.issues)}`);
  const cfg = parsed.output;
  const providers = cfg.providers.map((provider, i) => ({ ...provider, missingEnv: missingEnv[i] ?? [] }));
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
    if (m.category === 'embedding' && m.pricing?.input_per_mtok === undefined) {
      throw new ConfigError(`${source}: models[${i}].pricing: embedding models need input_per_mtok`);
    }
    if (m.category !== 'llm' && m.category !== 'embedding') {
      try {
        checkMediaOptions(m.options, `models[${i}].options`);
      } catch (err) {
        throw err instanceof ConfigError ? new ConfigError(`${source}: ${err.message}`) : err;
      }
    }
  });
  checkRouting(source, providers, cfg.models);
  return {
    providers,
    models: cfg.models,
    rateLimitPerMinute: cfg.rate_limit_per_minute,
    rateLimitPerAccountPerMinute: cfg.rate_limit_per_account_per_minute,
  };
}

/** Loads `GATEWAY_CONFIG` (YAML or JSON) or the built-in sandbox catalog. */
export async function loadGatewayConfig(
  path: string | undefined,
  env: Record<string, string | undefined>,
): Promise<GatewayConfig> {
  if (!path) return parseGatewayConfig(SANDBOX_CONFIG, env, 'built-in sandbox catalog');
  const file = Bun.file(path);
  if (!(await file.exists())) throw new ConfigError(`GATEWAY_CONFIG: file not found: ${path}`);
  const text = await file.text();
  let raw: unknown;
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `GATEWAY_CONFIG: ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`,
    );
  }
  return parseGatewayConfig(raw, env, path);
}
