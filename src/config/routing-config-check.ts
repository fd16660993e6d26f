import { ConfigError } from '../../providers/config/config-error.ts';
import type { ModelConfig, ProviderConfig } from '../../providers/config/config-schema.ts';

/**
 * Checks the routing keys of the config file (docs/routing.md) once the providers and models are
 * known: every deployment names a declared provider, every fallback a declared model of the same
 * category, and no chain of fallbacks leads back to where it started. Errors name the path.
 */
export function checkRouting(
  source: string,
  providers: readonly ProviderConfig[],
  models: readonly ModelConfig[],
): void {
  const providerIds = new Set(providers.map((p) => p.id));
  const byId = new Map(models.map((m) => [m.id, m]));
  const fail = (path: string, message: string): never => {
    throw new ConfigError(`${source}: ${path}: ${message}`);
  };
  models.forEach((model, i) => {
    const deployments = model.deployments ?? [];
    if (deployments.length && model.category !== 'llm')
      fail(`models[${i}].deployments`, `deployments are for llm models; a ${model.category} model uses fallbacks`);
    deployments.forEach((d, j) => {
      if (!providerIds.has(d.provider))
        fail(`models[${i}].deployments[${j}].provider`, `provider "${d.provider}" is not declared in providers`);
    });
    const weights = [model.weight ?? 1, ...deployments.map((d) => d.weight ?? 1)];
    if (weights.every((w) => w === 0)) fail(`models[${i}].weight`, 'at least one deployment needs a weight above 0');
    (model.fallbacks ?? []).forEach((id, j) => {
      const target = byId.get(id);
      if (!target) fail(`models[${i}].fallbacks[${j}]`, `model "${id}" is not declared in models`);
      else if (target.category !== model.category)
        fail(
          `models[${i}].fallbacks[${j}]`,
          `"${id}" is a ${target.category} model, "${model.id}" is ${model.category}`,
        );
      if (id === model.id) fail(`models[${i}].fallbacks[${j}]`, `"${id}" falls back to itself`);
    });
  });
  models.forEach((model, i) => {
    const cycle = findCycle(model.id, byId);
    if (cycle) fail(`models[${i}].fallbacks`, `fallbacks form a cycle: ${cycle.join(' -> ')}`);
  });
}

/** The first path of fallbacks from `start` that comes back to a model already on it. */
function findCycle(start: string, byId: ReadonlyMap<string, ModelConfig>): string[] | undefined {
  const onPath: string[] = [];
  const done = new Set<string>();
  const visit = (id: string): string[] | undefined => {
    const at = onPath.indexOf(id);
    if (at >= 0) return [...onPath.slice(at), id];
    if (done.has(id)) return undefined;
    onPath.push(id);
    for (const next of byId.get(id)?.fallbacks ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    onPath.pop();
    done.add(id);
    return undefined;
  };
  return visit(start);
}
