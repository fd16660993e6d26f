import { isIPv6 } from 'node:net';
import { parseIPv6 } from '../net/ip-address.ts';

/**
 * The client address of each request, as Bun.serve saw it (`server.requestIP`), recorded by
 * serve.ts before the app runs. Behind a reverse proxy (`TRUST_PROXY=true`) it is the last
 * `X-Forwarded-For` entry instead: the one the proxy itself appended. Never the first entry,
 * which the client writes.
 */
const addresses = new WeakMap<Request, string>();

/** Requests that never went through Bun.serve (in-process `app.handle`) share this address. */
export const UNKNOWN_ADDRESS = 'unknown';

export function rememberClientAddress(request: Request, peer: string | undefined, trustProxy: boolean): void {
  const address = (trustProxy ? lastForwardedFor(request.headers) : undefined) ?? peer;
  if (address) addresses.set(request, address);
}

export function clientAddress(request: Request): string {
  return addresses.get(request) ?? UNKNOWN_ADDRESS;
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
