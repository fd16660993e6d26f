import { Gauge, type Registry } from 'prom-client';
import type { EventLoopLag, LagFigures } from './event-loop-lag.ts';

/**
 * prom-client's event-loop lag series, same names, help and cross-process aggregators (so
 * dashboards and `AggregatorRegistry` read them as before), filled from `EventLoopLag`, which
 * rests when no request arrives (event-loop-lag.ts).
 */
const FIGURES: Array<[keyof LagFigures, string, 'min' | 'max' | 'average']> = [
  ['min', 'The minimum recorded event loop delay.', 'min'],
  ['max', 'The maximum recorded event loop delay.', 'max'],
  ['mean', 'The mean of the recorded event loop delays.', 'average'],
  ['stddev', 'The standard deviation of the recorded event loop delays.', 'average'],
  ['p50', 'The 50th percentile of the recorded event loop delays.', 'average'],
  ['p90', 'The 90th percentile of the recorded event loop delays.', 'average'],
  ['p99', 'The 99th percentile of the recorded event loop delays.', 'average'],
];

/** The names prom-client's default metrics give these series, to take its own out first. */
export const EVENT_LOOP_LAG_NAMES = [
  'nodejs_eventloop_lag_seconds',
  ...FIGURES.map(([figure]) => `nodejs_eventloop_lag_${figure}_seconds`),
];

export function registerEventLoopLag(registry: Registry, lag: EventLoopLag): void {
  const gauges: Array<[keyof LagFigures, Gauge]> = [];
  // Registered first, and its `collect` sets the figures before its first `await`: a scrape
  // starts every series' read in registration order, so the figures are this scrape's.
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of event loop in seconds.',
    aggregator: 'average',
    registers: [registry],
    async collect() {
      const figures = lag.read();
      for (const [figure, gauge] of gauges) gauge.set(figures[figure]);
      // The scrape's own wait for the loop.
      const start = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      this.set((performance.now() - start) / 1000);
    },
  });
  for (const [figure, help, aggregator] of FIGURES)
    gauges.push([
      figure,
      new Gauge({ name: `nodejs_eventloop_lag_${figure}_seconds`, help, aggregator, registers: [registry] }),
    ]);
}
