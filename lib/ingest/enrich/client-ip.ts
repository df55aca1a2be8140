// The visitor's IP address for country lookup and the cookieless hash. X-Forwarded-For is believed
// only as far as the operator says proxies are trusted: every entry left of our own proxies was
// written by the client and can be anything.
import { isIP } from 'node:net';
import { ipv4Value, MAPPED_V4 } from './ipv4.ts';

type Headers = Record<string, string | string[] | undefined>;

/** "[2001:db8::1]:443", as some proxies write IPv6 with a port. */
const BRACKETED_V6 = /^\[([^\]]+)\](?::\d+)?$/;
/** "203.0.113.7:51234", as some load balancers (Azure among them) append the client port. */
const V4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/;

/** A bare IP in canonical text (zone id, ::ffff: prefix, brackets and port removed), or null. */
function normalise(raw: string): string | null {
  let ip = raw.trim();
  // What nearly every request carries, and nothing below would change.
  if (ipv4Value(ip) !== -1) return ip;
  const bracketed = BRACKETED_V6.exec(ip);
  if (bracketed) ip = bracketed[1];
  else {
    const withPort = V4_WITH_PORT.exec(ip);
    if (withPort) ip = withPort[1];
  }
  const zone = ip.indexOf('%');
  if (zone !== -1) ip = ip.slice(0, zone);
  const mapped = MAPPED_V4.exec(ip);
  if (mapped) ip = mapped[1];
  if (ipv4Value(ip) !== -1) return ip;
  return isIP(ip) === 6 ? ip.toLowerCase() : null;
}

/**
 * The client address. With `trustedProxyHops` 0 (the default: no proxy trusted) it is the socket
 * address. With n > 0 it is the n-th X-Forwarded-For entry from the right, the one our outermost
 * trusted proxy saw; when the header has fewer entries, the leftmost. If the header is missing or
 * any entry a trusted proxy wrote is not an IP, the socket address is used. '' when no address
 * is known at all.
 */
export function clientIp(remoteAddress: string | undefined, headers: Headers, trustedProxyHops: number): string {
  const socket = remoteAddress === undefined ? '' : (normalise(remoteAddress) ?? '');
  if (!(trustedProxyHops > 0)) return socket;
  const raw = headers['x-forwarded-for'];
  const forwarded = Array.isArray(raw) ? raw.join(',') : raw;
  if (!forwarded) return socket;
  const entries = forwarded.split(',');
  const stop = Math.max(0, entries.length - trustedProxyHops);
  let client = socket;
  for (let i = entries.length - 1; i >= stop; i--) {
    const ip = normalise(entries[i]);
    if (ip === null) return socket;
    client = ip;
  }
  return client;
}
