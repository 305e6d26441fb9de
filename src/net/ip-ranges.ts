import { BlockList, isIP } from 'node:net';

/**
 * Address classification for the egress policy (CONTRACT section 10): which addresses count as private,
 * loopback, link-local or otherwise not on the public internet, and the operator's allow list.
 */

const blocked = new BlockList();
// IPv4: "this network", RFC 1918, CGNAT, loopback, link-local, IETF protocol assignments, benchmarking,
// documentation nets, multicast, reserved and broadcast.
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
// IPv6: unspecified, loopback, unique-local, link-local, site-local (deprecated), multicast, documentation.
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Parses an IPv6 address into 8 16-bit groups (handles `::` and a dotted IPv4 tail). */
function ipv6Groups(addr: string): number[] | undefined {
  let a = addr.toLowerCase();
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  let tail: number[] = [];
  if (a.includes('.')) {
    const lastColon = a.lastIndexOf(':');
    const v4 = a.slice(lastColon + 1);
    if (isIP(v4) !== 4) return undefined;
    const p = v4.split('.').map(Number);
    tail = [(p[0] << 8) | p[1], (p[2] << 8) | p[3]];
    a = a.slice(0, lastColon + 1);
    if (!a.endsWith('::')) a = a.slice(0, -1);
  }
  const [head, rest] = a.split('::');
  const parse = (s: string) => (s ? s.split(':').filter((x) => x !== '').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const r = rest === undefined ? [] : parse(rest);
  const fill = 8 - tail.length - h.length - r.length;
  if (fill < 0 || (rest === undefined && fill !== 0)) return undefined;
  const groups = [...h, ...new Array(rest === undefined ? 0 : fill).fill(0), ...r, ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that route to it: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16). Checking the embedded address stops
 * `http://[::ffff:127.0.0.1]/` from reaching loopback.
 */
export function embeddedIPv4(addr: string): string | undefined {
  const g = ipv6Groups(addr);
  if (!g) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6], g[7]);
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]);
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  return undefined;
}

/** True when the address is not a public unicast address (private, loopback, link-local, reserved...). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIPv4(address);
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
    return blocked.check(bare, 'ipv6');
  }
  return true;
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

  allowsAddress(address: string): boolean {
    if (this.empty) return false;
    const family = isIP(address);
    if (!family) return false;
    if (this.nets.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
    const v4 = family === 6 ? embeddedIPv4(address) : undefined;
    return v4 !== undefined && this.nets.check(v4, 'ipv4');
  }
}
