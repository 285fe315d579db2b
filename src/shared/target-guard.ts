import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as lookupCallback } from 'node:dns';

/** Operator settings that loosen the target rules (development and private networks). */
export interface TargetPolicy {
  /** Plain `http://` URLs are accepted (development mode). */
  allowHttp: boolean;
  /** Targets on private, loopback or link-local addresses are accepted. */
  allowPrivateTargets: boolean;
}

export const URL_MAX_LENGTH = 2048;

/** Addresses a webhook must not reach unless the operator allows it: not the public internet. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (any textual form isIP accepts: `::`, a dotted tail, a zone). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const [left, right] = text.split('::') as [string, string | undefined];
  if (right === undefined) return parse(left);
  const head = parse(left);
  const tail = parse(right);
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

const ipv4Of = (high: number, low: number) => [high >>> 8, high & 255, low >>> 8, low & 255].join('.');

/**
 * The IPv4 address an IPv6 address leads to, or null: IPv4-mapped (`::ffff:a.b.c.d`), SIIT
 * (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`)
 * and Teredo (the client's address, inverted, in the last 32 bits). A translator or tunnel on the
 * way delivers packets for these to that IPv4 address, so the IPv4 rules apply to them.
 */
export function embeddedIpv4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4Of(g[6]!, g[7]!);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6]!, g[7]!);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4-compatible ones.
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  if (g[0] === 0x2001 && g[1] === 0) return ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
  return null;
}

/** True for addresses outside the public internet, IPv4 embedded in IPv6 included. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: nothing to trust
  const v4 = embeddedIpv4(address);
  return v4 ? NON_PUBLIC.check(v4, 'ipv4') : NON_PUBLIC.check(address, 'ipv6');
}

/** Where an address sits: the public internet, this machine (loopback), or another non-public range. */
export type AddressKind = 'public' | 'loopback' | 'private';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

export function addressKind(address: string): AddressKind {
  if (!isNonPublicAddress(address)) return 'public';
  const v4 = isIP(address) === 4 ? address : embeddedIpv4(address);
  if (v4) return LOOPBACK.check(v4, 'ipv4') ? 'loopback' : 'private';
  return isIP(address) === 6 && LOOPBACK.check(address, 'ipv6') ? 'loopback' : 'private';
}

export type TargetProtocol = 'http:' | 'https:';

const NON_PUBLIC_REFUSAL = 'a private, loopback or link-local address, which is not allowed';

/**
 * Why connecting to `address` for a delivery over `protocol` is refused, or null. HTTPS reaches public
 * addresses; loopback needs development mode or private targets allowed; other non-public ranges
 * need private targets allowed. Plain http needs development mode and never goes to a public address.
 */
export function addressProblem(address: string, protocol: TargetProtocol, policy: TargetPolicy): string | null {
  const kind = addressKind(address);
  if (protocol === 'http:') {
    if (!policy.allowHttp) return 'plain http URLs are accepted only in development mode';
    if (kind === 'public') return `${address} is a public address: plain http is accepted only for loopback (or allowed private) receivers in development mode`;
  }
  if (kind === 'loopback' && !(policy.allowHttp || policy.allowPrivateTargets)) return `${address} is ${NON_PUBLIC_REFUSAL}`;
  if (kind === 'private' && !policy.allowPrivateTargets) return `${address} is ${NON_PUBLIC_REFUSAL}`;
  return null;
}

/** The problem with a URL's form (scheme, credentials, length), or null. No name resolution. */
export function urlFormProblem(raw: string, policy: TargetPolicy): string | null {
  if (raw.length > URL_MAX_LENGTH) return `URL should have at most ${URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Input should be a valid URL';
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    return policy.allowHttp
      ? 'URL scheme should be https, or http for a loopback receiver'
      : 'URL scheme should be https (plain http is accepted only in development mode, for loopback receivers)';
  }
  if (url.username || url.password) return 'URL should not contain credentials';
  if (!url.hostname) return 'URL should have a host';
  return null;
}

/**
 * At subscription time: refuses a host that is, or resolves to, an address the policy refuses
 * (see `addressProblem`). An https name that does not resolve (yet) is accepted: deliveries check
 * again when they connect. A plain http name must resolve, to show it is not on the internet.
 */
export async function targetProblem(raw: string, policy: TargetPolicy, timeoutMs = 3000): Promise<string | null> {
  const formProblem = urlFormProblem(raw, policy);
  if (formProblem) return formProblem;
  const url = new URL(raw);
  const protocol = url.protocol as TargetProtocol;
  if (protocol === 'https:' && policy.allowPrivateTargets) return null;
  const host = bareHost(url.hostname);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }).then((entries) => entries.map((entry) => entry.address)).catch(() => []),
      new Promise<string[]>((resolve) => setTimeout(() => resolve([]), timeoutMs).unref()),
    ]);
    if (addresses.length === 0 && protocol === 'http:') return `URL host ${host} does not resolve: plain http is accepted only for loopback (or allowed private) receivers`;
  }
  for (const address of addresses) {
    const problem = addressProblem(address, protocol, policy);
    if (problem) return isIP(host) ? `URL refused: ${problem}` : `URL refused: ${host} resolves to ${problem}`;
  }
  return null;
}

/** `[::1]` → `::1`: URL hostnames keep the brackets of IPv6 literals. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** Raised when a delivery's target resolves to an address the policy refuses. */
export class RefusedTargetError extends Error {
  override name = 'RefusedTargetError';
}

/**
 * A DNS lookup for an HTTP client that refuses, at connection time, the addresses `problemOf` refuses,
 * so a name that resolved to an allowed address when it was checked cannot be re-pointed inside (DNS
 * rebinding). URLs with an address instead of a name skip lookups: check those before connecting.
 */
export function guardedLookup(problemOf: (address: string) => string | null): LookupFunction {
  return (hostname, options, callback) => {
    lookupCallback(hostname, { ...options, all: true }, (error, entries) => {
      if (error) return callback(error, '', 0);
      const list = entries as unknown as { address: string; family: number }[];
      const problems = list.map((entry) => problemOf(entry.address));
      const allowed = list.filter((_, index) => problems[index] === null);
      if (allowed.length === 0) {
        return callback(new RefusedTargetError(`${hostname} resolves to ${problems.find(Boolean) ?? 'no address'}`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof allowed) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

/** Link-local addresses, IPv4 embedded in IPv6 included: where cloud metadata endpoints (169.254.169.254) answer. */
export function isLinkLocal(address: string): boolean {
  const v4 = isIP(address) === 4 ? address : embeddedIpv4(address);
  if (v4) return LINK_LOCAL.check(v4, 'ipv4');
  return isIP(address) === 6 && LINK_LOCAL.check(address, 'ipv6');
}

/**
 * Why a source (web pages, feeds) may not be fetched from `address`, or null. Link-local addresses are
 * always refused: nothing worth syncing lives there, but cloud metadata endpoints and their
 * credentials do. Private and loopback addresses (an intranet) need `allowPrivateNetworks`.
 */
export function sourceAddressProblem(address: string, allowPrivateNetworks: boolean): string | null {
  if (isLinkLocal(address)) return `${address}, a link-local address (where cloud metadata endpoints answer), which sources may not read`;
  if (!allowPrivateNetworks && isNonPublicAddress(address)) return `${address}, ${NON_PUBLIC_REFUSAL} for sources (CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS)`;
  return null;
}
