import type { ProviderHost } from '../../providers/types.ts';
import { blockedReason, isIpLiteral } from '../net/ip-address.ts';

/** Names that never resolve to a public address. */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i;

/**
 * Whether an upstream on the internet could call `PUBLIC_URL`: not when its host is loopback or a
 * private address, or a local-only name. Other names are taken as public (no DNS at start).
 */
export function isReachableFromOutside(publicUrl: string): boolean {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  if (isIpLiteral(host)) return blockedReason(host) === undefined;
  return !LOCAL_NAME.test(host) && host.includes('.');
}

export function providerHost(publicUrl: string): ProviderHost {
  return { publicUrl, publicUrlReachable: isReachableFromOutside(publicUrl) };
}
