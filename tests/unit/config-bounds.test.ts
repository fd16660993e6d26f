import { expect, test } from 'bun:test';
import { loadEnv } from '../../src/config/env.ts';
import { parseGatewayConfig } from '../../src/config/gateway-config.ts';

/**
 * Settings that were accepted at start and failed later (src/config/): an infinite or absurd
 * price made every call of its model a 500; a timer setting past 2^31 − 1 ms fired at once; a
 * `${VAR}` was filled after the checks; a token with whitespace could never match; an initial
 * balance out of range silently made no first account.
 */
const provider = { id: 'a', kind: 'openai' };
const llm = (extra: object = {}, pricing: object = {}) => ({
  id: 'a/x',
  category: 'llm',
  display_name: 'x',
  pricing: { input_per_mtok: 1, output_per_mtok: 1, ...pricing },
  ...extra,
});
const parse = (providers: unknown[], models: unknown[], env: Record<string, string> = {}) =>
  parseGatewayConfig({ providers, models }, env, 'cfg.yaml');

test('prices are finite and at most $1,000,000; token counts at most 100,000,000; timeouts at most a day', () => {
  expect(() => parse([provider], [llm({}, { input_per_mtok: Number.POSITIVE_INFINITY })])).toThrow(
    'models[0].pricing.input_per_mtok: must be at most 1000000 (USD)',
  );
  expect(() => parse([provider], [llm({}, { per_tool_call: { web_search: 1e300 } })])).toThrow(
    'must be at most 1000000',
  );
  expect(() => parse([provider], [llm({ max_output: 1e308 })])).toThrow(
    'models[0].max_output: must be at most 100000000',
  );
  expect(() => parse([{ ...provider, timeout_ms: 3_000_000_000 }], [llm()])).toThrow(
    'providers[0].timeout_ms: must be at most 86400000 (a day)',
  );
  const ok = parse([{ ...provider, timeout_ms: 600_000 }], [llm({ max_output: 128_000 }, { output_per_mtok: 600 })]);
  expect(ok.models[0]?.pricing?.output_per_mtok).toBe(600);
});

test('${VAR} references are filled before the checks; an unset one leaves its field to the default', () => {
  expect(() =>
    parse([{ ...provider, base_url: 'https://${ACME_HOST}/v1' }], [llm()], { ACME_HOST: 'bad host' }),
  ).toThrow('providers[0].base_url: expected an absolute URL');
  const filled = parse([{ ...provider, base_url: '${ACME_BASE_URL}' }], [llm()], {
    ACME_BASE_URL: 'https://acme.example/v1',
  });
  expect(filled.providers[0]?.base_url).toBe('https://acme.example/v1');
  expect(filled.providers[0]?.missingEnv).toEqual([]);
  const unset = parse([{ ...provider, base_url: '${ACME_BASE_URL}', api_key: '${ACME_KEY}' }], [llm()]);
  expect(unset.providers[0]?.base_url).toBeUndefined();
  expect(unset.providers[0]?.missingEnv).toEqual(['ACME_BASE_URL', 'ACME_KEY']);
});

test('environment: timers at most a day, tokens trimmed and whole, the initial balance in range', () => {
  expect(() => loadEnv({ BODY_TIMEOUT_MS: '3000000000' })).toThrow('BODY_TIMEOUT_MS: expected at most 86400000');
  expect(() => loadEnv({ TASK_EVENTS_HEARTBEAT_MS: '3000000000' })).toThrow('TASK_EVENTS_HEARTBEAT_MS');
  expect(() => loadEnv({ WEBHOOK_RETRY_DELAYS: '300,99999999999' })).toThrow('at most 604800 seconds');
  expect(loadEnv({ ADMIN_TOKEN: 'admintoken-1234567890\n' }).adminToken).toBe('admintoken-1234567890');
  expect(() => loadEnv({ METRICS_TOKEN: 'metrics token with spaces' })).toThrow('must not contain whitespace');
  expect(() => loadEnv({ INITIAL_BALANCE_USD: '100000000000000' })).toThrow('INITIAL_BALANCE_USD: must be at most');
  expect(() => loadEnv({ INITIAL_BALANCE_USD: '-5' })).toThrow('INITIAL_BALANCE_USD: must be at least 0');
  expect(loadEnv({ INITIAL_BALANCE_USD: '25.5' }).initialBalanceUsd).toBe(25.5);
});
