import { describe, expect, test } from '@jest/globals';
import { addressKind, addressProblem, embeddedIpv4, isLinkLocal, isNonPublicAddress, sourceAddressProblem } from './target-guard.js';

describe('IPv4 embedded in IPv6', () => {
  test('every form that leads to an IPv4 address yields it, dotted or hex', () => {
    const cases: [string, string][] = [
      ['::ffff:169.254.169.254', '169.254.169.254'],
      ['::ffff:a9fe:a9fe', '169.254.169.254'],
      ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1'],
      ['::ffff:0:10.0.0.1', '10.0.0.1'], // SIIT
      ['::169.254.169.254', '169.254.169.254'], // IPv4-compatible
      ['::a9fe:a9fe', '169.254.169.254'],
      ['::7f00:1', '127.0.0.1'],
      ['64:ff9b::169.254.169.254', '169.254.169.254'], // NAT64
      ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
      ['64:FF9B:0:0:0:0:0a00:0001', '10.0.0.1'],
      ['2002:a9fe:a9fe::1', '169.254.169.254'], // 6to4
      ['2002:0808:0808:1::', '8.8.8.8'],
      ['2001:0:4136:e378:8000:63bf:5601:5601', '169.254.169.254'], // Teredo: the client's address, inverted
      ['fe80::1%eth0', ''],
    ];
    for (const [address, v4] of cases) expect([address, embeddedIpv4(address)]).toEqual([address, v4 || null]);
    for (const address of ['::', '::1', '2606:4700::1111', 'fe80::a9fe:a9fe', '64:ff9b:1::a9fe:a9fe', '8.8.8.8', 'example.com']) expect([address, embeddedIpv4(address)]).toEqual([address, null]);
  });

  test('NAT64, IPv4-compatible, 6to4 and Teredo forms of non-public IPv4 addresses are non-public; of public ones, public', () => {
    for (const address of ['64:ff9b::a9fe:a9fe', '64:ff9b::7f00:1', '64:ff9b::a00:1', '::a9fe:a9fe', '::169.254.169.254', '::7f00:1', '::ffff:0:a9fe:a9fe', '2002:a9fe:a9fe::', '2002:c0a8:101::1', '2001:0:4136:e378:8000:63bf:5601:5601']) {
      expect([address, isNonPublicAddress(address)]).toEqual([address, true]);
    }
    for (const address of ['64:ff9b::808:808', '::808:808', '2002:808:808::1', '::ffff:8.8.8.8', '2606:4700::1111']) {
      expect([address, isNonPublicAddress(address)]).toEqual([address, false]);
    }
  });

  test('their kind and the policies follow the IPv4 address: link-local never for sources, loopback only when allowed', () => {
    expect(['64:ff9b::7f00:1', '::127.0.0.1', '::1'].map(addressKind)).toEqual(['loopback', 'loopback', 'loopback']);
    expect(['64:ff9b::a9fe:a9fe', '::a00:1', '2002:a00:1::'].map(addressKind)).toEqual(['private', 'private', 'private']);
    for (const address of ['64:ff9b::a9fe:a9fe', '::a9fe:a9fe', '::ffff:0:a9fe:a9fe', '2002:a9fe:a9fe::']) {
      expect([address, isLinkLocal(address)]).toEqual([address, true]);
      expect(sourceAddressProblem(address, true)).toMatch(/link-local/);
    }
    expect(sourceAddressProblem('64:ff9b::a00:1', false)).toMatch(/CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS/);
    expect(sourceAddressProblem('64:ff9b::808:808', false)).toBeNull();
    expect(addressProblem('64:ff9b::a9fe:a9fe', 'https:', { allowHttp: false, allowPrivateTargets: false })).toMatch(/private, loopback or link-local/);
    expect(addressProblem('::7f00:1', 'https:', { allowHttp: false, allowPrivateTargets: false })).toMatch(/private, loopback or link-local/);
    expect(addressProblem('::7f00:1', 'http:', { allowHttp: true, allowPrivateTargets: false })).toBeNull();
  });
});
