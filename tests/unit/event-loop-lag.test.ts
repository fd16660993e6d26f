import { afterEach, describe, expect, test } from 'bun:test';
import { Registry } from 'prom-client';
import { EventLoopLag } from '../../src/observability/event-loop-lag.ts';
import { EVENT_LOOP_LAG_NAMES, registerEventLoopLag } from '../../src/observability/event-loop-lag-gauges.ts';
import { registry as gatewayRegistry } from '../../src/observability/metrics.ts';
import { parsePrometheusText } from '../helpers/prometheus-text.ts';

/** Keeps the loop busy for `ms`: a stall the sampler must see. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning on purpose
  }
}

const samplers: EventLoopLag[] = [];
/** Sampled every 5 ms, resting after 4 samples without a request. */
function sampler(): EventLoopLag {
  const lag = new EventLoopLag(5, 4);
  samplers.push(lag);
  return lag;
}
afterEach(() => {
  for (const lag of samplers.splice(0)) lag.stop();
});

describe('the event-loop lag sampler', () => {
  test('does not run until a request arrives, and reads 0 at rest', () => {
    const lag = sampler();
    expect(lag.sampling).toBe(false);
    expect(lag.read()).toEqual({ min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 });
  });

  test('keeps sampling while requests arrive, rests once they stop, wakes at the next', async () => {
    const lag = sampler();
    for (let i = 0; i < 10; i++) {
      lag.busy();
      expect(lag.sampling).toBe(true);
      await Bun.sleep(6);
    }
    expect(lag.sampling).toBe(true);
    await Bun.sleep(120);
    expect(lag.sampling).toBe(false);
    lag.read();
    await Bun.sleep(30);
    expect(lag.read().max).toBe(0); // nothing sampled at rest
    lag.busy();
    expect(lag.sampling).toBe(true);
  });

  test('a stall while busy shows in the figures, which the next read starts afresh', async () => {
    const lag = sampler();
    lag.busy();
    await Bun.sleep(1);
    stall(80);
    await Bun.sleep(10);
    const figures = lag.read();
    expect(figures.max).toBeGreaterThanOrEqual(0.07);
    expect(figures.max).toBeLessThan(5);
    expect(figures.min).toBeLessThanOrEqual(figures.p50);
    expect(figures.p50).toBeLessThanOrEqual(figures.p99);
    expect(figures.p99).toBeLessThanOrEqual(figures.max);
    lag.busy();
    await Bun.sleep(30);
    expect(lag.read().max).toBeLessThan(0.07);
  });
});

describe('the event-loop lag series', () => {
  test('carry prom-client’s names, each once, with this scrape’s figures', async () => {
    const registry = new Registry();
    const lag = sampler();
    registerEventLoopLag(registry, lag);
    lag.busy();
    await Bun.sleep(1);
    stall(60);
    await Bun.sleep(10);
    const samples = parsePrometheusText(await registry.metrics());
    expect(samples.map((s) => s.name).sort()).toEqual([...EVENT_LOOP_LAG_NAMES].sort());
    const value = (name: string) => samples.find((s) => s.name === name)?.value;
    expect(value('nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.05);
    for (const s of samples) expect(Number.isFinite(s.value)).toBe(true);
  });

  test('the gateway’s registry has them once, and none of prom-client’s own sampler', async () => {
    const samples = parsePrometheusText(await gatewayRegistry.metrics());
    for (const name of EVENT_LOOP_LAG_NAMES) {
      const found = samples.filter((s) => s.name === name);
      expect(found).toHaveLength(1);
      expect(Number.isFinite(found[0]?.value)).toBe(true);
    }
    // prom-client's other default series are still there.
    expect(samples.some((s) => s.name === 'process_resident_memory_bytes')).toBe(true);
  });
});
