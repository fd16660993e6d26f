import type { DeploymentHealth } from './deployment-health.ts';
import type { Deployment, RoutingTable } from './routing-table.ts';

/**
 * The deployments one call may try, in order: the requested model's deployments in a weighted
 * random order (weight-0 ones last, as standbys), then each fallback model's the same way. A
 * deployment cooling down is left out, unless every one of them is: then the one that failed
 * longest ago is still tried, so a call is never refused without an upstream being asked.
 * `allowed`: the fallback models the caller may use (an API key's list); the others are left out
 * before any is chosen, so the one tried while all cool down is one the caller may use.
 * Pure computation over memory (docs/routing.md: the figure in bench/README.md).
 */
export function planRoute(
  table: RoutingTable,
  health: DeploymentHealth,
  modelId: string,
  /** The request's `x-gateway-fallbacks`, replacing the model's own list. */
  fallbacks?: readonly string[],
  random: () => number = Math.random,
  now: number = Date.now(),
  allowed?: (modelId: string) => boolean,
): Deployment[] {
  const chain = [modelId];
  for (const id of fallbacks ?? table.fallbacks(modelId))
    if (!chain.includes(id) && (!allowed || allowed(id))) chain.push(id);
  const healthy: Deployment[] = [];
  let rested: Deployment | undefined;
  for (const id of chain) {
    for (const d of weightedOrder(table.deployments(id), random)) {
      if (!health.coolingDown(d, now)) healthy.push(d);
      else if (!rested || health.lastFailedAt(d) < health.lastFailedAt(rested)) rested = d;
    }
  }
  if (healthy.length === 0 && rested) return [rested];
  return healthy;
}

/** Weighted sampling without replacement: each pick is proportional to the weights left. */
export function weightedOrder(deployments: readonly Deployment[], random: () => number): Deployment[] {
  if (deployments.length === 1) return [deployments[0] as Deployment];
  const pool = deployments.filter((d) => d.weight > 0);
  const standby = deployments.filter((d) => d.weight <= 0);
  const out: Deployment[] = [];
  let total = pool.reduce((n, d) => n + d.weight, 0);
  while (pool.length) {
    let point = random() * total;
    let index = 0;
    for (; index < pool.length - 1; index++) {
      point -= (pool[index] as Deployment).weight;
      if (point < 0) break;
    }
    const [picked] = pool.splice(index, 1) as [Deployment];
    total -= picked.weight;
    out.push(picked);
  }
  return [...out, ...standby];
}
