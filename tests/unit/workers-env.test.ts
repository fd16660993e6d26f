import { describe, expect, test } from 'bun:test';
import { readWorkerIndex, resolveWorkers } from '../../src/cluster/worker-role.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { loadEnv } from '../../src/config/env.ts';

const PG = 'postgres://postgres@127.0.0.1:5432/x';
const REDIS = 'redis://127.0.0.1:6379';

describe('WORKERS', () => {
  test('unset: one per core on Postgres+Redis, one otherwise', () => {
    expect(resolveWorkers(undefined, { databaseUrl: PG, redisUrl: REDIS }, 6)).toBe(6);
    expect(resolveWorkers(undefined, { databaseUrl: PG }, 6)).toBe(1);
    expect(resolveWorkers(undefined, {}, 6)).toBe(1);
    expect(loadEnv({}).workers).toBe(1);
  });

  test('an explicit value is kept, on every mode when it is 1', () => {
    expect(loadEnv({ WORKERS: '3', DATABASE_URL: PG, REDIS_URL: REDIS }).workers).toBe(3);
    expect(loadEnv({ WORKERS: '1' }).workers).toBe(1);
    expect(loadEnv({ WORKERS: '1', DATABASE_URL: PG }).workers).toBe(1);
  });

  test('above 1 without a shared database or store is refused, naming the variable', () => {
    expect(() => loadEnv({ WORKERS: '2' })).toThrow(/WORKERS=2 needs DATABASE_URL/);
    expect(() => loadEnv({ WORKERS: '2', REDIS_URL: REDIS })).toThrow(/WORKERS=2 needs DATABASE_URL/);
    expect(() => loadEnv({ WORKERS: '4', DATABASE_URL: PG })).toThrow(/WORKERS=4 needs REDIS_URL/);
  });

  test.each(['0', '-1', '1.5', 'two', '257', '99999999999999999999999'])('WORKERS=%p is refused', (value) => {
    let error: unknown;
    try {
      loadEnv({ WORKERS: value, DATABASE_URL: PG, REDIS_URL: REDIS });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('WORKERS');
  });

  test('the worker marker: 0 in the primary, the slot in a worker, garbage refused', () => {
    expect(readWorkerIndex({})).toBe(0);
    expect(readWorkerIndex({ GATEWAY_WORKER_INDEX: '' })).toBe(0);
    expect(readWorkerIndex({ GATEWAY_WORKER_INDEX: '3' })).toBe(3);
    expect(() => readWorkerIndex({ GATEWAY_WORKER_INDEX: '0' })).toThrow(ConfigError);
    expect(() => readWorkerIndex({ GATEWAY_WORKER_INDEX: 'x' })).toThrow(ConfigError);
    // A marker no primary of this WORKERS could have set: left over in an operator's environment.
    expect(() => loadEnv({ GATEWAY_WORKER_INDEX: '1' })).toThrow(/GATEWAY_WORKER_INDEX is set by the primary/);
    expect(loadEnv({ GATEWAY_WORKER_INDEX: '1', WORKERS: '2', DATABASE_URL: PG, REDIS_URL: REDIS }).workerIndex).toBe(
      1,
    );
  });

  test('workers of one INSTANCE_ID claim work under distinct ids', () => {
    const env = { INSTANCE_ID: 'host-a', WORKERS: '2', DATABASE_URL: PG, REDIS_URL: REDIS };
    expect(loadEnv(env).instanceId).toMatch(/^host-a-[0-9a-f]{8}$/);
    expect(loadEnv({ ...env, GATEWAY_WORKER_INDEX: '1' }).instanceId).toMatch(/^host-a-w1-[0-9a-f]{8}$/);
    // Two processes given one INSTANCE_ID (a replica template's) never share leases.
    expect(loadEnv(env).instanceId).not.toBe(loadEnv(env).instanceId);
  });

  test('DATABASE_POOL_SIZE: 20 connections per process unless set; a bad value names the variable', () => {
    expect(loadEnv({}).databasePoolSize).toBe(20);
    expect(loadEnv({ DATABASE_POOL_SIZE: '5' }).databasePoolSize).toBe(5);
    for (const bad of ['0', 'many', '1001'])
      expect(() => loadEnv({ DATABASE_POOL_SIZE: bad })).toThrow(/DATABASE_POOL_SIZE/);
  });
});
