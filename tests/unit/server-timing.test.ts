import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { serverTiming } from '../../src/observability/server-timing.ts';

describe('serverTiming', () => {
  test('three disjoint parts in milliseconds; the gateway’s is what neither the upstream nor the settlement took', () => {
    expect(serverTiming({ totalMs: 12.5, upstreamMs: 10, settleMs: 1.25 })).toBe(
      'gateway;dur=1.250, upstream;dur=10.000, settle;dur=1.250',
    );
  });

  test('a stream (no settlement yet) names two parts', () => {
    expect(serverTiming({ totalMs: 3.0004, upstreamMs: 2 })).toBe('gateway;dur=1.000, upstream;dur=2.000');
  });

  test('always a well-formed header: non-negative durations, whatever clock jitter gives', () => {
    const ms = fc.double({ min: 0, max: 1e7, noNaN: true });
    fc.assert(
      fc.property(ms, ms, fc.option(ms, { nil: undefined }), (totalMs, upstreamMs, settleMs) => {
        const header = serverTiming({ totalMs, upstreamMs, settleMs });
        expect(header).toMatch(/^gateway;dur=\d+\.\d{3}, upstream;dur=\d+\.\d{3}(, settle;dur=\d+\.\d{3})?$/);
      }),
    );
  });
});
