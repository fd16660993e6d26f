import type { ProviderConfig } from '../../providers/config/config-schema.ts';
import type { Catalog, CatalogEntry } from '../catalog/catalog.ts';
import { ConfigError } from '../config/config-error.ts';

/** Default seconds a deployment is skipped once it failed `FAILURES_BEFORE_COOLDOWN` times in a row. */
export const DEFAULT_COOLDOWN_S = 30;

/**
 * One upstream serving a catalog model: the model's own provider (deployment 0) or one of its
 * `deployments`. `entry` is the model served, whose id and prices a call it serves carries.
 */
export interface Deployment {
  /** Stable across instances: the health store's key (`<model>|<provider>|<upstream model>`). */
  key: string;
  entry: CatalogEntry;
  provider: ProviderConfig;
  upstreamModel: string;
  weight: number;
  cooldownMs: number;
}

/**
 * Each catalog model's deployments and fallbacks, resolved once at start (docs/routing.md).
 * Deployments on a provider whose credentials are unset, and fallbacks to models hidden for the
 * same reason, are left out: they could not serve.
 */
export class RoutingTable {
  private readonly deploymentsOf = new Map<string, Deployment[]>();
  private readonly fallbacksOf = new Map<string, string[]>();

  constructor(
    private readonly catalog: Catalog,
    providers: readonly ProviderConfig[],
    /** Providers able to serve the model's category; a deployment on another is a config error. */
    canServe: (provider: ProviderConfig, entry: CatalogEntry) => boolean,
    source = 'GATEWAY_CONFIG',
  ) {
    const byId = new Map(providers.map((p) => [p.id, p]));
    for (const entry of catalog.entries) {
      const config = entry.config;
      const own: Deployment = deployment(entry, entry.provider, defaultUpstream(entry), config.weight ?? 1);
      const extra = (config.deployments ?? []).flatMap((d, j) => {
        const provider = byId.get(d.provider);
        if (!provider || provider.missingEnv.length) return [];
        const made = deployment(entry, provider, d.upstream_model ?? defaultUpstream(entry), d.weight ?? 1);
        if (!canServe(provider, entry))
          throw new ConfigError(
            `${source}: ${entry.object.id} deployments[${j}].provider: "${provider.id}" (${provider.kind}) cannot serve ${entry.object.category} models`,
          );
        return [made];
      });
      this.deploymentsOf.set(entry.object.id, [own, ...extra]);
      this.fallbacksOf.set(
        entry.object.id,
        (config.fallbacks ?? []).filter((id) => catalog.get(id)),
      );
    }
  }

  deployments(modelId: string): readonly Deployment[] {
    return this.deploymentsOf.get(modelId) ?? [];
  }

  fallbacks(modelId: string): readonly string[] {
    return this.fallbacksOf.get(modelId) ?? [];
  }

  /** Whether `modelId` is in the catalog (a fallback named by a request must be). */
  has(modelId: string): CatalogEntry | undefined {
    return this.catalog.get(modelId);
  }

  all(): Deployment[] {
    return [...this.deploymentsOf.values()].flat();
  }
}

function defaultUpstream(entry: CatalogEntry): string {
  return entry.config.upstream_model ?? entry.object.id.slice(entry.provider.id.length + 1);
}

function deployment(entry: CatalogEntry, provider: ProviderConfig, upstreamModel: string, weight: number): Deployment {
  return {
    key: `${entry.object.id}|${provider.id}|${upstreamModel}`,
    entry,
    provider,
    upstreamModel,
    weight,
    cooldownMs: (provider.cooldown_s ?? DEFAULT_COOLDOWN_S) * 1000,
  };
}
