import { isIPv6 } from 'node:net';

/**
 * Parsing and classifying IP addresses for the SSRF guard. Only globally routable unicast
 * addresses are "public"; everything else gets the name of the range it falls in.
 * @see https://www.iana.org/assignments/iana-ipv4-special-registry
 * @see https://www.iana.org/assignments/iana-ipv6-special-registry
 */
export type AddressClass =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (CGNAT)'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

/** IPv4 ranges as [network address, prefix length, class]; first match wins. */
const V4_BLOCKS: Array<[number, number, AddressClass]> = [
  [ipv4(0, 0, 0, 0), 8, 'unspecified'],
  [ipv4(10, 0, 0, 0), 8, 'private'],
  [ipv4(100, 64, 0, 0), 10, 'shared (CGNAT)'],
  [ipv4(127, 0, 0, 0), 8, 'loopback'],
  // Includes 169.254.169.254, the cloud metadata endpoint.
  [ipv4(169, 254, 0, 0), 16, 'link-local'],
  [ipv4(172, 16, 0, 0), 12, 'private'],
  [ipv4(192, 0, 0, 0), 24, 'reserved'],
  [ipv4(192, 0, 2, 0), 24, 'reserved'],
  [ipv4(192, 168, 0, 0), 16, 'private'],
  [ipv4(198, 18, 0, 0), 15, 'reserved'],
  [ipv4(198, 51, 100, 0), 24, 'reserved'],
  [ipv4(203, 0, 113, 0), 24, 'reserved'],
  [ipv4(224, 0, 0, 0), 4, 'multicast'],
  // 240/4 includes the limited broadcast 255.255.255.255.
  [ipv4(240, 0, 0, 0), 4, 'reserved'],
];

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function formatV4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * The legacy `inet_aton` spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) as a 32-bit
 * number. WHATWG `new URL()` already rewrites them to dotted decimal; this is the second line.
 */
export function parseIPv4Loose(text: string): number | undefined {
  const parts = text.replace(/\.$/, '').split('.');
  if (parts.length < 1 || parts.length > 4) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = Number.parseInt(part, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
    else return undefined;
    values.push(value);
  }
  const last = values.pop() as number;
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return undefined;
  return values.reduce((acc, v, i) => acc + v * 2 ** (8 * (3 - i)), 0) + last;
}

/** Eight 16-bit words of an IPv6 address (zone id dropped, embedded dotted IPv4 allowed). */
export function parseIPv6(text: string): number[] | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  let head = bare;
  const tail: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted?.[1]) {
    const [a, b, c, d] = dotted[1].split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    head = bare.slice(0, dotted.index + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const words = (s: string) => (s === '' ? [] : s.split(':').map((w) => Number.parseInt(w, 16)));
  const [left, right] = head.split('::') as [string, string | undefined];
  const l = words(left);
  const r = right === undefined ? [] : words(right);
  const fill = 8 - tail.length - l.length - r.length;
  if (fill < 0 || (right === undefined && fill !== 0)) return undefined;
  return [...l, ...new Array<number>(fill).fill(0), ...r, ...tail];
}

/** The class of a non-public address, or undefined for a globally routable one. */
export function classifyIPv4(n: number): AddressClass | undefined {
  for (const [base, bits, cls] of V4_BLOCKS) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === base) return cls;
  }
  return undefined;
}

export function classifyIPv6(w: number[]): { cls: AddressClass | undefined; embedded?: string } {
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = w;
  const v4 = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;
  const embedded = (n: number) => ({ cls: classifyIPv4(n), embedded: formatV4(n) });
  const firstFiveZero = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0;
  if (firstFiveZero && w5 === 0 && w6 === 0 && w7 === 0) return { cls: 'unspecified' };
  if (firstFiveZero && w5 === 0 && w6 === 0 && w7 === 1) return { cls: 'loopback' };
  // ::ffff:a.b.c.d (mapped) reaches the IPv4 address itself.
  if (firstFiveZero && w5 === 0xffff) return embedded(v4(w6, w7));
  // ::a.b.c.d (deprecated "compatible" form): never a real destination.
  if (firstFiveZero && w5 === 0) return { cls: classifyIPv4(v4(w6, w7)) ?? 'reserved', embedded: formatV4(v4(w6, w7)) };
  // NAT64 well-known prefix 64:ff9b::/96 translates to the embedded IPv4 (RFC 6052).
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return embedded(v4(w6, w7));
  // Local-use NAT64 64:ff9b:1::/48 (RFC 8215) only exists inside a private network.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return { cls: 'private' };
  // 6to4 2002:AABB:CCDD::/48 tunnels to the IPv4 AA.BB.CC.DD (RFC 3056).
  if (w0 === 0x2002) {
    const inner = embedded(v4(w1, w2));
    return inner.cls ? inner : { cls: undefined };
  }
  if ((w0 & 0xfe00) === 0xfc00) return { cls: 'private' };
  if ((w0 & 0xffc0) === 0xfe80) return { cls: 'link-local' };
  if ((w0 & 0xffc0) === 0xfec0) return { cls: 'private' };
  if ((w0 & 0xff00) === 0xff00) return { cls: 'multicast' };
  // Teredo 2001::/32 and documentation 2001:db8::/32.
  if (w0 === 0x2001 && (w1 === 0 || w1 === 0xdb8)) return { cls: 'reserved' };
  // Only 2000::/3 is global unicast.
  if ((w0 & 0xe000) !== 0x2000) return { cls: 'reserved' };
  return { cls: undefined };
}

export interface Blocked {
  cls: AddressClass;
  /** The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4), when that decided. */
  embedded?: string;
}

/** Why `address` (any IPv4/IPv6 spelling) is not public, or undefined when it is. */
export function blockedReason(address: string): Blocked | undefined {
  const literal = address.replace(/^\[|\]$/g, '');
  const v4 = parseIPv4Loose(literal);
  if (v4 !== undefined) {
    const cls = classifyIPv4(v4);
    return cls ? { cls } : undefined;
  }
  const words = parseIPv6(literal);
  if (!words) return { cls: 'reserved' };
  const { cls, embedded } = classifyIPv6(words);
  if (!cls) return undefined;
  return embedded ? { cls, embedded } : { cls };
}

/** `10.0.0.5 is private`, `::ffff:7f00:1 → 127.0.0.1 is loopback`, for an address the client wrote. */
export function describeBlocked(blocked: Blocked, address: string): string {
  return `${address}${blocked.embedded ? ` → ${blocked.embedded}` : ''} is ${blocked.cls}`;
}

/** True when `host` is an IP literal rather than a name to resolve. */
export function isIpLiteral(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return parseIPv4Loose(bare) !== undefined || parseIPv6(bare) !== undefined;
}
