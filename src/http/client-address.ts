import { isIPv6 } from 'node:net';
import { parseIPv6 } from '../net/ip-address.ts';

/**
 * The client address of each request, as Bun.serve saw it (`server.requestIP`), registered by
 * serve.ts before the app runs and looked up the first time something asks: only a failed or
 * throttled authentication does, so the usual request never pays for `requestIP` (1.6 % of the
 * gateway's CPU samples under LLM load when it was read eagerly). Behind a reverse proxy
 * (`TRUST_PROXY=true`) it is the last `X-Forwarded-For` entry instead: the one the proxy itself
 * appended. Never the first entry, which the client writes.
 */
const addresses = new WeakMap<Request, string | (() => string | undefined)>();

/** Requests that never went through Bun.serve (in-process `app.handle`) share this address. */
export const UNKNOWN_ADDRESS = 'unknown';

/** `peer` is asked at most once, while the request is in flight. */
export function rememberClientAddress(request: Request, peer: () => string | undefined, trustProxy: boolean): void {
  addresses.set(request, () => (trustProxy ? lastForwardedFor(request.headers) : undefined) ?? peer());
}

export function clientAddress(request: Request): string {
  const known = addresses.get(request);
  if (typeof known !== 'function') return known ?? UNKNOWN_ADDRESS;
  const address = known() ?? UNKNOWN_ADDRESS;
  addresses.set(request, address);
  return address;
}

function lastForwardedFor(headers: Headers): string | undefined {
  const header = headers.get('x-forwarded-for');
  if (!header) return undefined;
  const last = header.slice(header.lastIndexOf(',') + 1).trim();
  return last || undefined;
}

/**
 * What failures are counted under: the address itself for IPv4, the /64 for IPv6 (one host
 * usually holds a whole /64, so counting single addresses would let it rotate freely).
 * IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function addressSubject(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const words = parseIPv6(address);
  if (!words) return address;
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}
