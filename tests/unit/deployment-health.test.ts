import { expect, test } from 'bun:test';
import { Catalog } from '../../src/catalog/catalog.ts';
import { toModelObject } from '../../src/catalog/model-object.ts';
import type { ModelConfig, ProviderConfig } from '../../src/config/gateway-config.ts';
import { Logger } from '../../src/ops/logger.ts';
import { DeploymentHealth } from '../../src/routing/deployment-health.ts';
import { RouteFailure, runRoute } from '../../src/routing/failover.ts';
import { planRoute } from '../../src/routing/route-plan.ts';
import { RoutingTable } from '../../src/routing/routing-table.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

const providers: ProviderConfig[] = ['a', 'b', 'c'].map((id) => ({
  id,
  kind: 'openai',
  missingEnv: [],
  cooldown_s: 30,
}));
const llm = (id: string, extra: Partial<ModelConfig> = {}): ModelConfig => ({
  id,
  category: 'llm',
  display_name: id,
  pricing: { input_per_mtok: 1, output_per_mtok: 1 },
  ...extra,
});

function setup() {
  const models = [llm('a/x', { deployments: [{ provider: 'b' }], fallbacks: ['c/y'] }), llm('c/y')];
  const byId = new Map(providers.map((p) => [p.id, p]));
  const catalog = new Catalog(
    models.map((config) => {
      const provider = byId.get(config.id.split('/')[0] ?? '') as ProviderConfig;
      const object = toModelObject(config, provider, 0);
      return { object, config, provider, json: JSON.stringify(object) };
    }),
  );
  let clock = 1_000_000;
  const table = new RoutingTable(catalog, providers, () => true);
  const health = new DeploymentHealth(new MemoryStore(), new Logger('error'), () => clock);
  const plan = () => planRoute(table, health, 'a/x', undefined, () => 0, clock).map((d) => d.key);
  return { table, health, plan, tick: (ms: number) => (clock += ms) };
}

test('three failures in a row cool a deployment down; it comes back after cooldown_s; a success resets the count', async () => {
  const { table, health, plan, tick } = setup();
  const [a, b] = table.deployments('a/x');
  if (!a || !b) throw new Error('deployments missing');
  expect(plan()).toEqual(['a/x|a|x', 'a/x|b|x', 'c/y|c|y']);
  await health.failed(a, 'boom');
  await health.failed(a, 'boom');
  expect(health.stateOf(a)).toMatchObject({ state: 'degraded', consecutive_failures: 2 });
  expect(plan()).toContain('a/x|a|x');
  await health.failed(a, 'boom');
  expect(health.stateOf(a).state).toBe('cooling_down');
  expect(plan()).toEqual(['a/x|b|x', 'c/y|c|y']);
  tick(30_001);
  expect(plan()[0]).toBe('a/x|a|x'); // tried again once the cooldown has passed
  await health.failed(a, 'still down');
  expect(plan()[0]).toBe('a/x|b|x'); // one more failure: cooling down again
  tick(30_001);
  health.succeeded(a);
  expect(health.stateOf(a)).toEqual({ state: 'ok', consecutive_failures: 0 });
});

test('every deployment cooling down: only the one that failed longest ago is tried', async () => {
  const { table, health, plan, tick } = setup();
  const all = [...table.deployments('a/x'), ...table.deployments('c/y')];
  for (const d of [all[1], all[2], all[0]]) {
    for (let i = 0; i < 3; i++) await health.failed(d as NonNullable<typeof d>, 'down');
    tick(1_000);
  }
  expect(plan()).toEqual(['a/x|b|x']);
});

test('the failover loop: provider failures move on, client errors stop at once, attempts add up', async () => {
  const { table, health } = setup();
  const plan = [...table.deployments('a/x'), ...table.deployments('c/y')];
  const seen: string[] = [];
  const served = await runRoute(
    plan,
    health,
    async (d, attempt) => {
      seen.push(d.key);
      attempt();
      attempt(); // a retry inside the provider
      if (d.provider.id !== 'c') throw new Error('503');
      return d.provider.id;
    },
    () => 'fail-over',
  );
  expect(served).toMatchObject({ value: 'c', attempts: 6 });
  expect(seen).toHaveLength(3);
  const refused = runRoute(
    plan,
    health,
    async () => {
      throw new Error('400');
    },
    () => 'client-error',
  );
  await expect(refused).rejects.toBeInstanceOf(RouteFailure);
  await refused.catch((err: RouteFailure) => {
    expect(err.attempts).toBe(1);
    expect(err.tried).toHaveLength(1);
  });
});

test("next-deployment: moves on without touching health; at the end a deployment's own failure is the one reported", async () => {
  const { table, health } = setup();
  const plan = [...table.deployments('a/x'), ...table.deployments('c/y')];
  const overloaded = new Error('503 overloaded');
  const doesNotFit = new Error('does not fit');
  const outcome = await runRoute(
    plan,
    health,
    async (d) => {
      throw d === plan[0] ? overloaded : doesNotFit;
    },
    (err) => (err === overloaded ? 'fail-over' : 'next-deployment'),
  ).catch((err: RouteFailure) => err);
  expect(outcome).toBeInstanceOf(RouteFailure);
  expect((outcome as RouteFailure).cause).toBe(overloaded);
  expect((outcome as RouteFailure).tried).toHaveLength(plan.length);
  // Only refusals to fit: the last one is reported, and nobody's health moved.
  const only = await runRoute(
    plan,
    health,
    async () => {
      throw doesNotFit;
    },
    () => 'next-deployment',
  ).catch((err: RouteFailure) => err);
  expect((only as RouteFailure).cause).toBe(doesNotFit);
  for (const d of table.deployments('c/y')) expect(health.stateOf(d).state).toBe('ok');
});

test('every deployment cooling down: the one tried is one the caller may use, not a fallback outside its list', async () => {
  const { table, health, tick } = setup();
  const fallback = table.deployments('c/y')[0];
  if (!fallback) throw new Error('deployment missing');
  // The fallback fails first, the model's deployments a second later: the fallback is the one
  // that rested longest, the one tried when all cool down.
  for (let i = 0; i < 3; i++) await health.failed(fallback, 'down');
  tick(1_000);
  for (const d of table.deployments('a/x')) for (let i = 0; i < 3; i++) await health.failed(d, 'down');
  const now = 1_000_000 + 1_000;
  const everyone = planRoute(table, health, 'a/x', undefined, () => 0, now).map((d) => d.key);
  expect(everyone).toEqual(['c/y|c|y']);
  // A key kept to a/x: the plan was that fallback, then empty once the key's list was applied.
  const keyOnly = planRoute(
    table,
    health,
    'a/x',
    undefined,
    () => 0,
    now,
    (id) => id === 'a/x',
  ).map((d) => d.key);
  expect(keyOnly).toHaveLength(1);
  expect(keyOnly[0]).toStartWith('a/x|');
});
