import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { CellCounter, CellHistogram } from '../../src/observability/cell-metrics.ts';

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];
const LABELS = ['model', 'status'] as const;

/** The same metrics twice: prom-client's own, and the cells the hot path uses. */
function pair() {
  const own = new Registry();
  const cells = new Registry();
  return {
    own,
    cells,
    ownCounter: new Counter({ name: 'calls_total', help: 'Calls.', labelNames: LABELS, registers: [own] }),
    ownHistogram: new Histogram({
      name: 'call_seconds',
      help: 'Call time.',
      labelNames: LABELS,
      buckets: BUCKETS,
      registers: [own],
    }),
    cellCounter: new CellCounter({ name: 'calls_total', help: 'Calls.', labelNames: LABELS, registers: [cells] }),
    cellHistogram: new CellHistogram({
      name: 'call_seconds',
      help: 'Call time.',
      labelNames: LABELS,
      buckets: BUCKETS,
      registers: [cells],
    }),
  };
}

// Label values from a small set (so label sets repeat), numbers among them as a status would be.
const update = fc.record({
  model: fc.constantFrom('a/x', 'b/y', 'c "quoted"\\', 'd\nline'),
  status: fc.constantFrom<string | number>(200, '200', 404, 'ok'),
  value: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...BUCKETS)),
  counted: fc.nat({ max: 1000 }),
});

describe('cell metrics', () => {
  test('expose exactly the text prom-client’s own counter and histogram expose for the same updates', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(update, { maxLength: 60 }), async (updates) => {
        const m = pair();
        for (const { model, status, value, counted } of updates) {
          m.ownCounter.inc({ model, status }, counted);
          m.cellCounter.inc({ model, status }, counted);
          m.ownHistogram.observe({ model, status }, value);
          m.cellHistogram.observe({ model, status }, value);
        }
        expect(await m.cells.metrics()).toBe(await m.own.metrics());
        expect(await m.cells.getMetricsAsJSON()).toEqual(await m.own.getMetricsAsJSON());
      }),
      { numRuns: 200 },
    );
  });

  test('merge across workers as prom-client’s do (AggregatorRegistry sums them)', async () => {
    const a = pair();
    const b = pair();
    for (const [m, n] of [
      [a, 3],
      [b, 5],
    ] as const) {
      for (let i = 0; i < n; i++) {
        for (const [counter, histogram] of [
          [m.ownCounter, m.ownHistogram],
          [m.cellCounter, m.cellHistogram],
        ] as const) {
          counter.inc({ model: 'a/x', status: 200 });
          histogram.observe({ model: `m${i % 2}`, status: 'ok' }, i / 4);
        }
      }
    }
    const own = AggregatorRegistry.aggregate([await a.own.getMetricsAsJSON(), await b.own.getMetricsAsJSON()]);
    const cells = AggregatorRegistry.aggregate([await a.cells.getMetricsAsJSON(), await b.cells.getMetricsAsJSON()]);
    expect(await cells.metrics()).toBe(await own.metrics());
    expect(await cells.metrics()).toContain('calls_total{model="a/x",status="200"} 8');
  });

  test('refuse what prom-client refuses: a label not declared, a value that is not a number, a decrease', async () => {
    const m = pair();
    expect(() => m.cellCounter.inc({ model: 'a', other: 'x' } as never)).toThrow('other');
    expect(() => m.cellHistogram.observe({ model: 'a' }, Number.NaN)).toThrow(TypeError);
    m.ownHistogram.observe({ model: 'b' }, 1);
    m.cellHistogram.observe({ model: 'b' }, 1);
    expect(() => m.ownHistogram.observe({ model: 'nan' }, Number.NaN)).toThrow(TypeError);
    expect(() => m.cellHistogram.observe({ model: 'nan' }, Number.NaN)).toThrow(TypeError);
    expect(() => m.cellCounter.inc({ model: 'a' }, -1)).toThrow();
    // A refused update leaves nothing behind: no series for its labels, as in prom-client's text.
    expect(m.cellCounter.inc({ model: 'a' }, 2)).toBeUndefined();
    const histograms = async (r: typeof m.own) =>
      (await r.metrics()).split('\n').filter((l) => l.startsWith('call_seconds'));
    expect(await histograms(m.cells)).toEqual(await histograms(m.own));
    expect((await m.cells.metrics()).includes('model="nan"')).toBe(false);
  });

  test('a label left out is left out of the series, as prom-client leaves it', async () => {
    const m = pair();
    m.ownCounter.inc({ model: 'a' });
    m.cellCounter.inc({ model: 'a' });
    m.ownCounter.inc({ model: 'a', status: 1 });
    m.cellCounter.inc({ model: 'a', status: 1 });
    expect(await m.cells.metrics()).toBe(await m.own.metrics());
  });

  test('reset empties every series', async () => {
    const m = pair();
    m.cellCounter.inc({ model: 'a' });
    m.cellHistogram.observe({ model: 'a' }, 1);
    m.cellCounter.reset();
    m.cellHistogram.reset();
    m.cellCounter.inc({ model: 'b' });
    expect(await m.cells.metrics()).not.toContain('model="a"');
    expect(await m.cells.metrics()).toContain('calls_total{model="b"} 1');
  });
});
