import type { ProviderConfig } from '../config/gateway-config.ts';
import type { Provider } from '../../providers/types.ts';

/**
 * What `/readyz` says of each configured provider: `ok`, `unconfigured: missing FAL_KEY` (its
 * `${ENV}` references are unset, so its models are hidden) or `failing: …` (its recent upstream
 * calls on this instance all failed).
 */
export function providerStatuses(
  configs: readonly ProviderConfig[],
  providers: ReadonlyMap<string, Provider>,
): Record<string, string> {
  const statuses: Record<string, string> = {};
  for (const config of configs) {
    if (config.missingEnv.length) {
      statuses[config.id] = `unconfigured: missing ${[...new Set(config.missingEnv)].join(', ')}`;
      continue;
    }
    const failing = providers.get(config.id)?.health?.failing();
    statuses[config.id] = failing ? `failing: ${failing}` : 'ok';
  }
  return statuses;
}
