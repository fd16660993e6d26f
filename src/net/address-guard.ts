import { lookup } from 'node:dns/promises';
import { blockedReason, describeBlocked, isIpLiteral } from './ip-address.ts';
import { UnsafeUrlError } from './net-errors.ts';

/**
 * SSRF guard for every outbound fetch of a URL a user gave us (webhooks, URL uploads, voice
 * samples, provider output URLs): only absolute http(s) URLs without credentials, and only when
 * every address the host resolves to is public. `ALLOW_PRIVATE_URLS` (tests) lifts the address
 * rule, never the form rules.
 */
export type Resolver = (hostname: string) => Promise<string[]>;

/** getaddrinfo, as the fetch itself would resolve; every address, in the system's order. */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface CheckUrlOptions {
  allowPrivate: boolean;
  /** Names the URL in messages, e.g. `callback_url`. */
  field?: string;
  /** Injectable so tests can feed any addresses; defaults to the system resolver. */
  resolve?: Resolver;
}

export interface CheckedUrl {
  url: URL;
  /** Host without IPv6 brackets. */
  hostname: string;
  /** Every address the host resolved to, all public; empty when nothing was resolved. */
  addresses: string[];
  /** True when the URL names an IP itself rather than a host name. */
  literal: boolean;
}

export async function checkUrl(input: string | URL, opts: CheckUrlOptions): Promise<CheckedUrl> {
  const field = opts.field ?? 'url';
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new UnsafeUrlError('invalid_url', `${field}: not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UnsafeUrlError('scheme', `${field}: only http and https URLs are allowed, not ${url.protocol}`);
  }
  if (url.username || url.password)
    throw new UnsafeUrlError('credentials', `${field}: credentials in the URL are not allowed`);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIpLiteral(hostname);
  if (opts.allowPrivate) return { url, hostname, addresses: literal ? [hostname] : [], literal };

  if (literal) {
    const blocked = blockedReason(hostname);
    // The address is the client's own text, so naming it tells them nothing new.
    if (blocked)
      throw new UnsafeUrlError(
        'blocked_address',
        `${field}: points to a private address (${describeBlocked(blocked, hostname)})`,
        hostname,
      );
    return { url, hostname, addresses: [hostname], literal };
  }
  let addresses: string[];
  try {
    addresses = await (opts.resolve ?? systemResolver)(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UnsafeUrlError('unresolvable', `${field}: host ${hostname} does not resolve${code ? ` (${code})` : ''}`);
  }
  if (addresses.length === 0) throw new UnsafeUrlError('unresolvable', `${field}: host ${hostname} does not resolve`);
  // One bad address is enough: the client may pick any of them, and an attacker controls the order.
  for (const address of addresses) {
    const blocked = blockedReason(address);
    // Never which address, nor which kind: the refusal must not turn the gateway into a probe
    // of what names resolve to inside its network. `address` stays on the error for logs.
    if (blocked) throw new UnsafeUrlError('blocked_address', `${field}: resolves to a private address`, address);
  }
  return { url, hostname, addresses, literal };
}
