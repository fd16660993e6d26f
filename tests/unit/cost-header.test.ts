import { expect, test } from 'bun:test';
import { costHeader } from '../../src/http/cost-header.ts';

test('x-gateway-cost-usd is a plain decimal to 1e-10, trailing zeros dropped, never exponent form', () => {
  const header = (usd: number) => costHeader(usd)['x-gateway-cost-usd'];
  expect(header(6e-8)).toBe('0.00000006');
  expect(header(0.01)).toBe('0.01');
  expect(header(0)).toBe('0');
  expect(header(12.5)).toBe('12.5');
  expect(header(3)).toBe('3');
  expect(header(1.23456789012e-5)).toBe('0.0000123457');
  for (const usd of [6e-8, 0.01, 12.5, 0.000008]) expect(Number(header(usd))).toBeCloseTo(usd, 10);
});
