import { BlockList, isIP } from 'node:net';

/**
 * Address classification for the egress policy (docs/contract.md#egress): which addresses count as private,
 * loopback, link-local or otherwise not on the public internet, and the operator's allow list.
 */

/**
 * IPv4: the IANA IPv4 Special-Purpose Address Registry's ranges that are not globally reachable, plus multicast
 * and the reserved 240/4 (which holds 255.255.255.255). The registry's globally reachable anycast entries
 * (192.31.196/24 and 192.175.48/24 AS112, 192.52.193/24 AMT) stay public; 192.0.0/24 is refused whole, including
 * its two anycast addresses, as nothing an agent calls lives there.
 */
const IPV4_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the limited broadcast 255.255.255.255
];

/**
 * IPv6: only 2000::/3 is global unicast; everything outside it is refused (::/128, ::1/128, the IPv4-compatible
 * and IPv4-translated ::ffff:0:0:0/96 forms, 64:ff9b:1::/48 local NAT64, 100::/64 discard, 100:0:0:1::/64 dummy,
 * 5f00::/16 SRv6 SIDs, fc00::/7, fe80::/10, fec0::/10, ff00::/8 and the unassigned space), except the two forms
 * that carry a routed IPv4 address: IPv4-mapped ::ffff:0:0/96 and NAT64 64:ff9b::/96, judged by that address.
 * Inside 2000::/3 the IANA IPv6 Special-Purpose Address Registry's entries below are refused too; 6to4 2002::/16
 * is judged by its embedded IPv4 address.
 */
const IPV6_GLOBAL_UNICAST = new BlockList();
IPV6_GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');
const IPV6_NON_PUBLIC_IN_GLOBAL: readonly (readonly [string, number])[] = [
  // IETF protocol assignments: Teredo 2001::/32 (embeds an IPv4 address), benchmarking 2001:2::/48, ORCHID
  // 2001:10::/28, ORCHIDv2 2001:20::/28, DRIP 2001:30::/28, and anycast services no agent needs.
  ['2001::', 23],
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
];

const blocked = new BlockList();
for (const [net, prefix] of IPV4_NON_PUBLIC) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of IPV6_NON_PUBLIC_IN_GLOBAL) blocked.addSubnet(net, prefix, 'ipv6');

/**
 * An IPv6 address as 8 16-bit groups, or undefined when it is not one. The zone id is dropped; the WHATWG URL
 * parser (the one every fetch uses) folds case, `::` compression, leading zeros and a dotted IPv4 tail, so what
 * is classified is what a request would connect to.
 */
function ipv6Groups(addr: string): number[] | undefined {
  const zone = addr.indexOf('%');
  const bare = zone >= 0 ? addr.slice(0, zone) : addr;
  if (isIP(bare) !== 6) return undefined;
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const [head, tail] = canonical.split('::') as [string, string | undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  const groups = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
const zeros = (g: number[], from: number, to: number) => g.slice(from, to).every((x) => x === 0);
const groupsText = (g: number[]) => g.map((x) => x.toString(16)).join(':');

/**
 * The IPv4 address an IPv6 address routes to: IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16). Checking the embedded address stops `http://[::ffff:127.0.0.1]/` from reaching loopback.
 */
export function embeddedIPv4(addr: string): string | undefined {
  const g = ipv6Groups(addr);
  return g && embeddedOf(g);
}

function embeddedOf(g: number[]): string | undefined {
  if (zeros(g, 0, 5) && g[5] === 0xffff) return v4Of(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(g, 2, 6)) return v4Of(g[6], g[7]);
  if (g[0] === 0x2002) return v4Of(g[1], g[2]);
  return undefined;
}

/** True when the address is not a public unicast address (private, loopback, link-local, reserved...). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  const g = ipv6Groups(address);
  // Anything that is not a well-formed address (e.g. octal or hexadecimal IPv4 text) is refused.
  if (!g) return true;
  const v4 = embeddedOf(g);
  if (v4 !== undefined) return blocked.check(v4, 'ipv4');
  const text = groupsText(g);
  return !IPV6_GLOBAL_UNICAST.check(text, 'ipv6') || blocked.check(text, 'ipv6');
}

/**
 * The operator's exceptions (AGENTRY_EGRESS_ALLOW): host names (exact, or `*.example.com` for subdomains),
 * single addresses and CIDR ranges of either family.
 */
export class EgressAllowList {
  private readonly hosts = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly nets = new BlockList();
  private empty = true;

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const e = raw.trim().toLowerCase().replace(/^\[|\]$/g, '');
      if (!e) continue;
      this.empty = false;
      const slash = e.indexOf('/');
      const ip = slash >= 0 ? e.slice(0, slash) : e;
      const family = isIP(ip);
      if (family) {
        const type = family === 4 ? 'ipv4' : 'ipv6';
        const prefix = slash >= 0 ? Number(e.slice(slash + 1)) : family === 4 ? 32 : 128;
        if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
          throw new Error(`Invalid AGENTRY_EGRESS_ALLOW entry "${raw}"`);
        }
        this.nets.addSubnet(ip, prefix, type);
      } else if (e.startsWith('*.')) {
        this.suffixes.push(e.slice(1));
      } else {
        this.hosts.add(e);
      }
    }
  }

  allowsHost(hostname: string): boolean {
    if (this.empty) return false;
    const h = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
    return this.hosts.has(h) || this.suffixes.some((s) => h.endsWith(s));
  }

  allowsAddress(raw: string): boolean {
    if (this.empty) return false;
    const address = raw.includes('%') ? raw.slice(0, raw.indexOf('%')) : raw;
    const family = isIP(address);
    if (!family) return false;
    if (this.nets.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
    const v4 = family === 6 ? embeddedIPv4(address) : undefined;
    return v4 !== undefined && this.nets.check(v4, 'ipv4');
  }
}
