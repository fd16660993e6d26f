import { describe, expect, test } from 'bun:test';
import { checkUrl, type Resolver } from '../../src/net/address-guard.ts';
import { blockedReason, parseIPv4Loose, parseIPv6 } from '../../src/net/ip-address.ts';
import { UnsafeUrlError } from '../../src/net/net-errors.ts';

/** A resolver that answers from a table, so no test depends on real DNS. */
const table =
  (answers: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

async function refusal(url: string, resolve?: Resolver): Promise<UnsafeUrlError> {
  try {
    await checkUrl(url, { allowPrivate: false, field: 'callback_url', resolve: resolve ?? table({}) });
  } catch (err) {
    expect(err).toBeInstanceOf(UnsafeUrlError);
    return err as UnsafeUrlError;
  }
  throw new Error(`${url} was accepted`);
}

describe('address classification', () => {
  const blocked: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.7', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback → 127.0.0.1'],
    ['::ffff:7f00:1', 'loopback → 127.0.0.1'],
    ['0:0:0:0:0:ffff:a00:5', 'private → 10.0.0.5'],
    ['::ffff:169.254.169.254', 'link-local → 169.254.169.254'],
    ['::127.0.0.1', 'loopback → 127.0.0.1'],
    ['::7f00:1', 'loopback → 127.0.0.1'],
    ['::5db8:d822', 'reserved → 93.184.216.34'],
    ['64:ff9b::10.0.0.1', 'private → 10.0.0.1'],
    ['64:ff9b::7f00:1', 'loopback → 127.0.0.1'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback → 127.0.0.1'],
    ['2002:c0a8:101::', 'private → 192.168.1.1'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'],
    ['100::1', 'reserved'],
  ];
  for (const [address, reason] of blocked) {
    test(`${address} → ${reason}`, () => {
      const blocked = blockedReason(address);
      expect(blocked && `${blocked.cls}${blocked.embedded ? ` → ${blocked.embedded}` : ''}`).toBe(reason);
    });
  }

  for (const address of [
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '2a00:1450:4001::1',
    '::ffff:93.184.216.34',
    '64:ff9b::5db8:d822',
    '2002:5db8:d822::1',
  ]) {
    test(`${address} is public`, () => expect(blockedReason(address)).toBeUndefined());
  }

  test('legacy IPv4 spellings parse to the same number', () => {
    const loopback = 0x7f000001;
    for (const spelling of [
      '2130706433',
      '0x7f000001',
      '0x7f.0.0.1',
      '0177.0.0.1',
      '127.1',
      '127.0.1',
      '017700000001',
      '127.0.0.1.',
    ]) {
      expect(parseIPv4Loose(spelling)).toBe(loopback);
    }
    expect(parseIPv4Loose('256.0.0.1')).toBeUndefined();
    expect(parseIPv4Loose('0x7g.1')).toBeUndefined();
    expect(parseIPv4Loose('example.com')).toBeUndefined();
    expect(blockedReason('0x7f.1')).toEqual({ cls: 'loopback' });
  });

  test('IPv6 parsing expands :: and embedded dotted IPv4', () => {
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
    expect(parseIPv6('::1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0x0102, 0x0304]);
    expect(parseIPv6('2606:4700::1111')).toEqual([0x2606, 0x4700, 0, 0, 0, 0, 0, 0x1111]);
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('not-an-ip')).toBeUndefined();
  });
});

describe('checkUrl', () => {
  test('URL host spellings of loopback are refused, whatever the notation', async () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0x7f.0.0.1/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://017700000001/',
      'http://127.0.0.1.:8080/x',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[::127.0.0.1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://[2002:7f00:1::]/',
    ]) {
      const err = await refusal(url);
      expect(err.reason).toBe('blocked_address');
      expect(err.message).toMatch(/^callback_url: points to a private address \(.* is loopback\)$/);
    }
  });

  test('other private literals are refused as private addresses, their class named', async () => {
    expect((await refusal('http://169.254.169.254/latest/meta-data/')).message).toBe(
      'callback_url: points to a private address (169.254.169.254 is link-local)',
    );
    expect((await refusal('https://10.0.0.5:8443/hook')).message).toBe(
      'callback_url: points to a private address (10.0.0.5 is private)',
    );
    expect((await refusal('http://0/')).message).toBe(
      'callback_url: points to a private address (0.0.0.0 is unspecified)',
    );
    expect((await refusal('http://[::]/')).address).toBe('::');
    expect((await refusal('http://[fd00::1]/')).reason).toBe('blocked_address');
    expect((await refusal('http://100.64.1.1/')).message).toContain('CGNAT');
    expect((await refusal('http://224.0.0.1/')).message).toContain('multicast');
  });

  test('a name is refused when ANY of its addresses is private, without naming the address', async () => {
    const resolve = table({
      'hooks.example': ['93.184.216.34', '10.0.0.5'],
      'v6.example': ['2606:4700::1111', 'fe80::1'],
      'mapped.example': ['::ffff:192.168.0.1'],
    });
    const hooks = await refusal('https://hooks.example/cb', resolve);
    expect(hooks.message).toBe('callback_url: resolves to a private address');
    expect(hooks.address).toBe('10.0.0.5');
    expect((await refusal('https://v6.example/cb', resolve)).message).toBe(
      'callback_url: resolves to a private address',
    );
    expect((await refusal('https://mapped.example/cb', resolve)).message).toBe(
      'callback_url: resolves to a private address',
    );
  });

  test('localhost is refused through the real resolver', async () => {
    const err = await (async () => {
      try {
        await checkUrl('http://localhost:1234/', { allowPrivate: false });
      } catch (e) {
        return e as UnsafeUrlError;
      }
    })();
    expect(err?.reason).toBe('blocked_address');
    expect(err?.message).toBe('url: resolves to a private address');
  });

  test('form rules: scheme, credentials, absolute URL, unresolvable host', async () => {
    expect((await refusal('ftp://93.184.216.34/file')).reason).toBe('scheme');
    expect((await refusal('file:///etc/passwd')).reason).toBe('scheme');
    expect((await refusal('javascript:alert(1)')).reason).toBe('scheme');
    expect((await refusal('http://user:pass@93.184.216.34/')).message).toBe(
      'callback_url: credentials in the URL are not allowed',
    );
    expect((await refusal('http://user@93.184.216.34/')).reason).toBe('credentials');
    expect((await refusal('/relative/path')).reason).toBe('invalid_url');
    expect((await refusal('http://[fe80::1%25eth0]/')).reason).toBe('invalid_url');
    const gone = await refusal('https://nowhere.example/');
    expect(gone.reason).toBe('unresolvable');
    expect(gone.message).toBe('callback_url: host nowhere.example does not resolve (ENOTFOUND)');
    expect((await refusal('https://empty.example/', table({ 'empty.example': [] }))).reason).toBe('unresolvable');
    expect((await refusal('ftp://x/')).status).toBe(422);
  });

  test('public literals and names pass, with every resolved address returned', async () => {
    const a = await checkUrl('https://93.184.216.34/x', { allowPrivate: false });
    expect(a).toMatchObject({ hostname: '93.184.216.34', addresses: ['93.184.216.34'], literal: true });
    const b = await checkUrl('http://[2606:4700::1111]:8080/', { allowPrivate: false });
    expect(b).toMatchObject({ hostname: '2606:4700::1111', addresses: ['2606:4700::1111'], literal: true });
    const c = await checkUrl('https://cdn.example/a.png', {
      allowPrivate: false,
      resolve: table({ 'cdn.example': ['93.184.216.34', '2606:4700::1111'] }),
    });
    expect(c).toMatchObject({
      hostname: 'cdn.example',
      addresses: ['93.184.216.34', '2606:4700::1111'],
      literal: false,
    });
  });

  test('allowPrivate lifts the address rule but not the form rules, and resolves nothing', async () => {
    let resolved = false;
    const resolve: Resolver = async () => {
      resolved = true;
      return ['10.0.0.1'];
    };
    expect((await checkUrl('http://127.0.0.1:9/', { allowPrivate: true })).addresses).toEqual(['127.0.0.1']);
    expect((await checkUrl('http://internal.example/', { allowPrivate: true, resolve })).addresses).toEqual([]);
    expect(resolved).toBe(false);
    await expect(checkUrl('ftp://127.0.0.1/', { allowPrivate: true })).rejects.toBeInstanceOf(UnsafeUrlError);
    await expect(checkUrl('http://a:b@127.0.0.1/', { allowPrivate: true })).rejects.toBeInstanceOf(UnsafeUrlError);
  });
});
