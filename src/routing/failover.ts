import type { DeploymentHealth } from './deployment-health.ts';
import type { Deployment } from './routing-table.ts';

/** How a failed attempt on one deployment is treated. */
export type FailureVerdict =
  /** The provider's fault (connect error, timeout, 429, 5xx): counted against it, next deployment. */
  | 'fail-over'
  /** The client's own error (an upstream 400/401/403/404/413/422): returned as it is. */
  | 'client-error'
  /**
   * The request does not fit this deployment (too large for its organisation's rate limit): the
   * next one may take it; the deployment's health is untouched, as for a client error.
   */
  | 'next-deployment'
  /** The caller went away or the gateway broke: stop at once, health untouched. */
  | 'stop';

/** Every deployment failed, or one failed in a way that must not fail over: the last error and the count. */
export class RouteFailure extends Error {
  override name = 'RouteFailure';
  constructor(
    override readonly cause: unknown,
    readonly deployment: Deployment,
    readonly attempts: number,
    readonly tried: ReadonlyArray<{ deployment: Deployment; error: string }>,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * The one selection-and-failover loop (docs/routing.md): tries the plan's deployments in order
 * until one serves. `run` makes the attempt and reports each upstream HTTP attempt it makes (its
 * provider's own retries included) through `attempt`, so the total can be told to the client; each
 * deployment's retries are bounded by its provider's `max_retries`, so a call makes at most
 * Σ(max_retries + 1) upstream attempts over the deployments it may try.
 */
export async function runRoute<T>(
  plan: readonly Deployment[],
  health: DeploymentHealth,
  run: (deployment: Deployment, attempt: () => void) => Promise<T>,
  classify: (err: unknown) => FailureVerdict,
): Promise<{ value: T; deployment: Deployment; attempts: number }> {
  let attempts = 0;
  const tried: Array<{ deployment: Deployment; error: string }> = [];
  /** The last failure of a deployment's own (fail-over): what the client hears if the rest only refuse to fit. */
  let failed: { err: unknown; deployment: Deployment } | undefined;
  for (let i = 0; i < plan.length; i++) {
    const deployment = plan[i] as Deployment;
    let reported = 0;
    try {
      const value = await run(deployment, () => reported++);
      attempts += Math.max(1, reported);
      health.succeeded(deployment);
      return { value, deployment, attempts };
    } catch (err) {
      attempts += Math.max(1, reported);
      const verdict = classify(err);
      const message = err instanceof Error ? err.message : String(err);
      tried.push({ deployment, error: message });
      switch (verdict) {
        case 'fail-over':
          await health.failed(deployment, message);
          failed = { err, deployment };
          if (i === plan.length - 1) throw new RouteFailure(err, deployment, attempts, tried);
          break;
        case 'client-error':
          health.succeeded(deployment);
          throw new RouteFailure(err, deployment, attempts, tried);
        case 'next-deployment':
          // None left: a deployment that failed on its own (a 5xx, a 429) says more than one that
          // only could not take this request, and its error (and retry-after) is the client's.
          if (i === plan.length - 1)
            throw new RouteFailure(failed?.err ?? err, failed?.deployment ?? deployment, attempts, tried);
          break;
        case 'stop':
          throw new RouteFailure(err, deployment, attempts, tried);
        default: {
          const exhaustive: never = verdict;
          throw new Error(`unknown verdict ${exhaustive}`);
        }
      }
    }
  }
  throw new Error('no deployment to try');
}
