/**
 * Routing benchmark: what selection adds to each call — the plan of deployments and fallbacks
 * (`Router.plan`: the `x-gateway-fallbacks` check, weighted order, cooldown filter), in process.
 * Prints p50/p99 per call over many calls, with all deployments healthy and with some cooling down.
 *
 *   bun run bench/routing.ts [--calls 200000]
 */
import { Catalog } from '../src/catalog/catalog.ts';
import { toModelObject } from '../src/catalog/model-object.ts';
import type { ModelConfig, ProviderConfig } from '../src/config/gateway-config.ts';
import { Logger } from '../src/ops/logger.ts';
import { DeploymentHealth } from '../src/routing/deployment-health.ts';
import { Router } from '../src/routing/router.ts';
import { RoutingTable } from '../src/routing/routing-table.ts';
import { MemoryStore } from '../src/store/memory-store.ts';
import { numberArg } from './lib/cli-args.ts';

const calls = numberArg('--calls', 200_000);
const providers: ProviderConfig[] = ['p0', 'p1', 'p2', 'p3', 'p4'].map((id) => ({
  id,
  kind: 'openai',
  missingEnv: [],
}));
const llm = (id: string, extra: Partial<ModelConfig> = {}): ModelConfig => ({
  id,
  category: 'llm',
  display_name: id,
  pricing: { input_per_mtok: 1, output_per_mtok: 2 },
  ...extra,
});
const models: ModelConfig[] = [
  llm('p0/big', {
    weight: 3,
    deployments: [
      { provider: 'p1', weight: 2 },
      { provider: 'p2', weight: 1 },
    ],
    fallbacks: ['p3/medium', 'p4/small'],
  }),
  llm('p3/medium', { deployments: [{ provider: 'p1' }] }),
  llm('p4/small'),
];
const byId = new Map(providers.map((p) => [p.id, p]));
const catalog = new Catalog(
  models.map((config) => {
    const provider = byId.get(config.id.split('/')[0] ?? '') as ProviderConfig;
    const object = toModelObject(config, provider, 0);
    return { object, config, provider, json: JSON.stringify(object) };
  }),
);
const table = new RoutingTable(catalog, providers, () => true);
const health = new DeploymentHealth(new MemoryStore(), new Logger('error'));
await health.start(table.all());
const router = new Router(table, health);
const entry = catalog.get('p0/big');
if (!entry) throw new Error('no model');

function measure(label: string, header: string | null): Record<string, string> {
  for (let i = 0; i < 20_000; i++) router.plan(entry as NonNullable<typeof entry>, header); // warm-up
  const samples = new Float64Array(calls);
  let planned = 0;
  for (let i = 0; i < calls; i++) {
    const start = Bun.nanoseconds();
    planned += router.plan(entry as NonNullable<typeof entry>, header).length;
    samples[i] = Bun.nanoseconds() - start;
  }
  samples.sort();
  const at = (q: number) => ((samples[Math.floor(q * (calls - 1))] as number) / 1e6).toFixed(5);
  return {
    case: label,
    calls: String(calls),
    'p50 ms': at(0.5),
    'p99 ms': at(0.99),
    'mean plan length': (planned / calls).toFixed(1),
  };
}

const rows = [measure('all healthy', null), measure('x-gateway-fallbacks: p4/small', 'p4/small')];
// Cool two deployments down (3 failures each) and measure again.
for (const d of table.deployments('p0/big').slice(0, 2)) for (let i = 0; i < 3; i++) await health.failed(d, 'bench');
rows.push(measure('2 of 3 deployments cooling down', null));

const columns = Object.keys(rows[0] as object);
console.log(`| ${columns.join(' | ')} |`);
console.log(`| ${columns.map(() => '---').join(' | ')} |`);
for (const row of rows) console.log(`| ${columns.map((c) => row[c]).join(' | ')} |`);
process.exit(0);
