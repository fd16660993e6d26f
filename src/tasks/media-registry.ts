import type { MediaModel, ModelRef, Provider } from '../../providers/types.ts';
import type { Catalog, CatalogEntry } from '../catalog/catalog.ts';
import { isMediaCategory } from '../catalog/model-object.ts';
import { ConfigError } from '../config/config-error.ts';

export interface ResolvedMediaModel {
  entry: CatalogEntry;
  ref: ModelRef;
  media: MediaModel;
}

/**
 * The media models of the catalog, resolved once at start: each catalog entry whose provider
 * serves it as a media job. A media entry no provider can run is a configuration error.
 */
export class MediaRegistry {
  private readonly byId = new Map<string, ResolvedMediaModel>();

  constructor(catalog: Catalog, providers: ReadonlyMap<string, Provider>) {
    for (const entry of catalog.entries) {
      if (!isMediaCategory(entry.object.category)) continue;
      const media = providers.get(entry.provider.id)?.media?.model(entry.config);
      if (!media)
        throw new ConfigError(
          `models: ${entry.object.id}: provider ${entry.provider.id} (kind ${entry.provider.kind}) cannot run ${entry.object.category} tasks`,
        );
      const upstreamModel = entry.config.upstream_model ?? entry.object.id.slice(entry.provider.id.length + 1);
      this.byId.set(entry.object.id, { entry, ref: { id: entry.object.id, upstreamModel }, media });
    }
  }

  get(modelId: string): ResolvedMediaModel | undefined {
    return this.byId.get(modelId);
  }

  /** Legacy `/{slug}/generate`: the model id with `/` as `-`, or the bare model name when unique. */
  bySlug(slug: string): ResolvedMediaModel | undefined {
    const matches = [...this.byId.values()].filter(
      (m) => m.ref.id.replace('/', '-') === slug || m.ref.id.split('/')[1] === slug,
    );
    const exact = matches.find((m) => m.ref.id.replace('/', '-') === slug);
    return exact ?? (matches.length === 1 ? matches[0] : undefined);
  }
}
