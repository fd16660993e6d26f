import { registerModels } from './model-registry.repository.ts';
import type { GatewayConfig, ModelConfig, ProviderConfig } from '../config/gateway-config.ts';
import type { Db } from '../db/database.ts';
import { CATEGORY_ORDER, compareModels, toModelObject, type Category, type ModelObject } from './model-object.ts';

export interface CatalogEntry {
  object: ModelObject;
  config: ModelConfig;
  provider: ProviderConfig;
  /** The model object serialised once: the hot path answers with these bytes. */
  json: string;
}

/**
 * The model catalog, built once at start from the config and the `model_registry` table (which
 * remembers when each model was first added). Immutable afterwards: reads never touch the DB.
 */
export class Catalog {
  readonly entries: CatalogEntry[];
  private readonly byId = new Map<string, CatalogEntry>();
  private readonly byProvider = new Map<string, CatalogEntry[]>();
  private readonly listJsonCache = new Map<string, string>();

  constructor(entries: CatalogEntry[]) {
    this.entries = [...entries].sort((a, b) => compareModels(a.object, b.object));
    for (const entry of this.entries) {
      this.byId.set(entry.object.id, entry);
      const list = this.byProvider.get(entry.provider.id) ?? [];
      list.push(entry);
      this.byProvider.set(entry.provider.id, list);
    }
  }

  get(id: string): CatalogEntry | undefined {
    return this.byId.get(id);
  }

  providerModels(providerId: string): CatalogEntry[] | undefined {
    return this.byProvider.get(providerId);
  }

  list(categories?: ReadonlySet<Category>): CatalogEntry[] {
    return categories ? this.entries.filter((e) => categories.has(e.object.category)) : this.entries;
  }

  /** `{object: 'list', data}` as JSON, cached per distinct filter. */
  listJson(entries: CatalogEntry[], cacheKey: string): string {
    let json = this.listJsonCache.get(cacheKey);
    if (!json) {
      json = `{"object":"list","data":[${entries.map((e) => e.json).join(',')}]}`;
      this.listJsonCache.set(cacheKey, json);
    }
    return json;
  }
}

export async function buildCatalog(db: Db, config: GatewayConfig): Promise<Catalog> {
  const added = await registerModels(
    db,
    config.models.map((m) => m.id),
  );
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  const entries = config.models.flatMap((model) => {
    const provider = providers.get(model.id.split('/')[0] ?? '');
    if (!provider) throw new Error(`model ${model.id} has no provider`);
    // A provider whose credentials are unset cannot serve: its models are neither listed nor usable.
    if (provider.missingEnv.length) return [];
    const object = toModelObject(model, provider, added.get(model.id) ?? Math.floor(Date.now() / 1000));
    return [{ object, config: model, provider, json: JSON.stringify(object) }];
  });
  return new Catalog(entries);
}

export function isCategory(value: string): value is Category {
  return (CATEGORY_ORDER as readonly string[]).includes(value);
}
