import { expect, test } from 'bun:test';
import { fromUnits, toUnits, toUsdString } from '../../src/accounts/money.ts';

test('USD amounts convert to exact 1e-10 units and back', () => {
  expect(toUnits('12.5000000000')).toBe(125_000_000_000n);
  expect(toUnits('-0.01')).toBe(-100_000_000n);
  expect(toUnits('3')).toBe(30_000_000_000n);
  expect(toUnits(0.0000000001)).toBe(1n);
  expect(fromUnits(125_000_000_000n)).toBe('12.5000000000');
  expect(fromUnits(-100_000_000n)).toBe('-0.0100000000');
  expect(fromUnits(5n)).toBe('0.0000000005');
  // 0.1 + 0.2 drifts in floats, never in units.
  expect(fromUnits(toUnits(0.1) + toUnits(0.2))).toBe('0.3000000000');
  expect(fromUnits(toUnits(toUsdString(1 / 3)))).toBe('0.3333333333');
});

test('every finite amount converts exactly; other text is refused, never read as another amount', () => {
  // 5.0000000000000005e28 was once read as $5: the mantissa as dollars, the rest as a fraction.
  expect(toUnits(5.0000000000000005e28)).toBe(BigInt(5.0000000000000005e28) * 10_000_000_000n);
  expect(toUnits(-1e300)).toBe(-BigInt(1e300) * 10_000_000_000n);
  expect(toUsdString(1e21)).toBe('1000000000000000000000.0000000000');
  for (const amount of [Number.NaN, Number.POSITIVE_INFINITY]) expect(() => toUnits(amount)).toThrow(RangeError);
  for (const text of ['5e+28', '5.0000000000000005e+28', '0x10', '', '1.2.3', 'NaN'])
    expect(() => toUnits(text)).toThrow(RangeError);
  expect(toUnits('+2.')).toBe(20_000_000_000n);
});
