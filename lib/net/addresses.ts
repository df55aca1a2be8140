// Which IP addresses an outbound request may connect to. An allow-list, not a block-list: only
// plain public unicast passes (IPv4 outside every special range, IPv6 inside global unicast
// 2000::/3 and outside every special range), so a range nobody thought of is refused, not reached.
import ipaddr from 'ipaddr.js';

export interface AddressCheck {
  /** The address to connect to: IPv4-mapped IPv6 is unwrapped to its IPv4 form. */
  address: string;
  family: 4 | 6;
  /** ipaddr.js's range name ('unicast' for ordinary addresses), or our own for the explicit checks. */
  range: string;
  /** True when a connection may go there without allowPrivate. */
  public: boolean;
}

// IPv6 addresses ipaddr.js calls 'unicast' may still lie outside 2000::/3 (IPv4-compatible ::a.b.c.d,
// unassigned space); only global unicast is reachable on the public internet.
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
// Explicit IPv4 checks on top of ipaddr.js's table, so the policy does not hang on one library
// version: "this network" 0/8, shared address space 100.64/10, benchmarking 198.18/15, 240/4.
const REFUSED_V4: [string, ReturnType<typeof ipaddr.parseCIDR>][] = [
  ['unspecified', ipaddr.parseCIDR('0.0.0.0/8')],
  ['carrierGradeNat', ipaddr.parseCIDR('100.64.0.0/10')],
  ['benchmarking', ipaddr.parseCIDR('198.18.0.0/15')],
  ['reserved', ipaddr.parseCIDR('240.0.0.0/4')],
];
// And for IPv6: documentation 2001:db8::/32 and 3fff::/20, Teredo 2001::/32, 6to4 2002::/16, NAT64.
const REFUSED_V6: [string, ReturnType<typeof ipaddr.parseCIDR>][] = [
  ['reserved', ipaddr.parseCIDR('2001:db8::/32')],
  ['reserved', ipaddr.parseCIDR('3fff::/20')],
  ['teredo', ipaddr.parseCIDR('2001::/32')],
  ['6to4', ipaddr.parseCIDR('2002::/16')],
  ['rfc6052', ipaddr.parseCIDR('64:ff9b::/96')],
  ['rfc6052', ipaddr.parseCIDR('64:ff9b:1::/48')],
];

function checkV4(ip: ipaddr.IPv4): AddressCheck {
  let range: string = ip.range();
  for (const [name, cidr] of REFUSED_V4) if (range === 'unicast' && ip.match(cidr as [ipaddr.IPv4, number])) range = name;
  return { address: ip.toString(), family: 4, range, public: range === 'unicast' };
}

/** Classifies an IP literal (IPv6 with or without brackets); null when it is not one. */
export function checkAddress(literal: string): AddressCheck | null {
  const text = literal.startsWith('[') && literal.endsWith(']') ? literal.slice(1, -1) : literal;
  // isValidFourPartDecimal refuses the legacy forms ("127.1", "0x7f.0.0.1") that resolvers may
  // still interpret: an address is accepted only in the spelling everybody reads the same way.
  if (!ipaddr.IPv4.isValidFourPartDecimal(text) && !ipaddr.IPv6.isValid(text)) return null;
  const ip = ipaddr.parse(text);
  if (ip.kind() === 'ipv4') return checkV4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  // ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d: judge (and connect to) that host.
  if (v6.isIPv4MappedAddress()) return checkV4(v6.toIPv4Address());
  let range: string = v6.range();
  if (range === 'unicast' && !v6.match(GLOBAL_UNICAST as [ipaddr.IPv6, number])) range = 'reserved';
  for (const [name, cidr] of REFUSED_V6) if (range === 'unicast' && v6.match(cidr as [ipaddr.IPv6, number])) range = name;
  return { address: v6.toString(), family: 6, range, public: range === 'unicast' };
}

/** True for an address an outbound request may reach without allowPrivate. Not an IP: false. */
export function isPublicAddress(literal: string): boolean {
  return checkAddress(literal)?.public === true;
}
