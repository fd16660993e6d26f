import { expect, test } from 'bun:test';
import { parseGatewayConfig } from '../../src/config/gateway-config.ts';
import { weightedOrder } from '../../src/routing/route-plan.ts';
import type { Deployment } from '../../src/routing/routing-table.ts';
import { parseCacheHeader } from '../../src/routing/routing-headers.ts';

const providers = [
  { id: 'a', kind: 'openai' },
  { id: 'b', kind: 'openai' },
];
const llm = (id: string, extra: object = {}) => ({
  id,
  category: 'llm',
  display_name: id,
  pricing: { input_per_mtok: 1, output_per_mtok: 1 },
  ...extra,
});
const refused = (models: unknown[]) => () => parseGatewayConfig({ providers, models }, {}, 'cfg.yaml');

test('deployments and fallbacks are checked at start, the error naming the path', () => {
  expect(refused([llm('a/x', { deployments: [{ provider: 'b' }, { provider: 'zz' }] })])).toThrow(
    'cfg.yaml: models[0].deployments[1].provider: provider "zz" is not declared in providers',
  );
  expect(refused([llm('a/x', { fallbacks: ['b/missing'] })])).toThrow(
    'cfg.yaml: models[0].fallbacks[0]: model "b/missing" is not declared in models',
  );
  const image = { id: 'b/img', category: 'image', display_name: 'img', pricing: { per_image: 0.01 } };
  expect(refused([llm('a/x', { fallbacks: ['b/img'] }), image])).toThrow(
    'cfg.yaml: models[0].fallbacks[0]: "b/img" is a image model, "a/x" is llm',
  );
  expect(refused([llm('a/x', { fallbacks: ['b/y'] }), llm('b/y', { fallbacks: ['a/x'] })])).toThrow(
    'cfg.yaml: models[0].fallbacks: fallbacks form a cycle: a/x -> b/y -> a/x',
  );
  expect(refused([llm('a/x', { weight: 0, deployments: [{ provider: 'b', weight: 0 }] })])).toThrow(
    'models[0].weight: at least one deployment needs a weight above 0',
  );
  expect(refused([{ ...image, deployments: [{ provider: 'a' }] }])).toThrow(
    'models[0].deployments: deployments are for llm models',
  );
  const ok = parseGatewayConfig(
    {
      providers,
      models: [llm('a/x', { deployments: [{ provider: 'b', weight: 2 }], fallbacks: ['b/y'] }), llm('b/y')],
    },
    {},
    'cfg.yaml',
  );
  expect(ok.models[0]?.deployments?.[0]?.weight).toBe(2);
});

test('weighted order: first picks follow the weights; weight 0 is a standby, always last', () => {
  const d = (key: string, weight: number) => ({ key, weight }) as Deployment;
  const list = [d('x', 3), d('y', 1), d('z', 0)];
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const first = { x: 0, y: 0, z: 0 };
  for (let i = 0; i < 4000; i++) {
    const order = weightedOrder(list, random);
    expect(order.map((o) => o.key).sort()).toEqual(['x', 'y', 'z']);
    expect(order[2]?.key).toBe('z');
    first[order[0]?.key as 'x' | 'y' | 'z']++;
  }
  expect(first.z).toBe(0);
  expect(Math.abs(first.x / 4000 - 0.75)).toBeLessThan(0.03);
});

test('x-gateway-cache: ttl=<s> or no-store; anything else is refused', () => {
  expect(parseCacheHeader(null, undefined)).toEqual({ ttlS: 0 });
  expect(parseCacheHeader(null, 30)).toEqual({ ttlS: 30 });
  expect(parseCacheHeader('ttl=60', 30)).toEqual({ ttlS: 60 });
  expect(parseCacheHeader('no-store', 30)).toEqual({ ttlS: 0 });
  for (const bad of ['ttl=', 'ttl=-1', 'ttl=1e3', 'ttl=99999999', 'forever', 'ttl=5\u0000'])
    expect(() => parseCacheHeader(bad, undefined)).toThrow('x-gateway-cache');
});
