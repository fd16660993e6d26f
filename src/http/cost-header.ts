import { toUsdString } from '../accounts/money.ts';

/**
 * `x-gateway-cost-usd` (docs/keys.md): a call's charge as a plain decimal to the ledger's
 * precision (1e-10 USD), trailing zeros dropped: `0.00000006`, never `String(6e-8)`'s `6e-8`,
 * which a client reading dollars from a header need not expect.
 */
export function costHeader(usd: number): Record<string, string> {
  const text = toUsdString(usd);
  return { 'x-gateway-cost-usd': text.includes('.') ? text.replace(/\.?0+$/, '') : text };
}
