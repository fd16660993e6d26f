import { expect, test } from 'bun:test';
import { parsePrometheusText } from '../helpers/prometheus-text.ts';

test('the test parser reads NaN and infinities as a scraper does, in any case, and refuses anything else', () => {
  // prom-client writes `Nan` for a gauge with nothing measured yet (a process scraped as it starts).
  const samples = parsePrometheusText(
    ['# HELP a A.', 'a_lag Nan', 'b_le{le="+Inf"} +Inf', 'c -Inf', 'd NaN', 'e 1.5e3', ''].join('\n'),
  );
  expect(samples.map((s) => [s.name, s.value])).toEqual([
    ['a_lag', Number.NaN],
    ['b_le', Number.POSITIVE_INFINITY],
    ['c', Number.NEGATIVE_INFINITY],
    ['d', Number.NaN],
    ['e', 1500],
  ]);
  expect(() => parsePrometheusText('f nope\n')).toThrow('not a sample value');
});
