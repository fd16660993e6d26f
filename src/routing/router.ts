import type { CatalogEntry } from '../catalog/catalog.ts';
import type { DeploymentHealth, DeploymentState } from './deployment-health.ts';
import { runRoute, type FailureVerdict } from './failover.ts';
import { planRoute } from './route-plan.ts';
import type { Deployment, RoutingTable } from './routing-table.ts';
import { parseFallbacksHeader } from './routing-headers.ts';

/** A model named in `x-gateway-fallbacks` that the caller may not use. */
export class FallbackNotAllowed extends Error {
  override name = 'FallbackNotAllowed';
  constructor(readonly modelId: string) {
    super(`x-gateway-fallbacks: the caller may not use the model '${modelId}'`);
  }
}

/** Selection and failover for LLM calls and media tasks alike: the table, the shared health, the loop. */
export class Router {
  constructor(
    readonly table: RoutingTable,
    readonly health: DeploymentHealth,
  ) {}

  /**
   * The deployments a call to `entry` may try, given the request's `x-gateway-fallbacks` header.
   * `allowed`: the models the caller may use (an API key's list): a configured fallback outside it
   * is left out; one the client named in the header is refused (FallbackNotAllowed), whatever
   * the deployments' health.
   */
  plan(entry: CatalogEntry, fallbacksHeader: string | null, allowed?: (modelId: string) => boolean): Deployment[] {
    const fallbacks = parseFallbacksHeader(fallbacksHeader, this.table, entry.object.category);
    const refused = allowed && fallbacks?.find((id) => !allowed(id));
    if (refused) throw new FallbackNotAllowed(refused);
    return planRoute(this.table, this.health, entry.object.id, fallbacks, Math.random, Date.now(), allowed);
  }

  run<T>(
    plan: readonly Deployment[],
    attempt: (deployment: Deployment, countAttempt: () => void) => Promise<T>,
    classify: (err: unknown) => FailureVerdict,
  ) {
    return runRoute(plan, this.health, attempt, classify);
  }

  /** Every deployment of every model with its health, for `/readyz` and the dashboard. */
  states(): Record<string, Array<{ provider: string; upstream_model: string; weight: number } & DeploymentState>> {
    const out: Record<
      string,
      Array<{ provider: string; upstream_model: string; weight: number } & DeploymentState>
    > = {};
    for (const d of this.table.all()) {
      const list = out[d.entry.object.id] ?? [];
      list.push({
        provider: d.provider.id,
        upstream_model: d.upstreamModel,
        weight: d.weight,
        ...this.health.stateOf(d),
      });
      out[d.entry.object.id] = list;
    }
    return out;
  }
}
