// Country (and region, when the database has one) of a visitor's IP from an offline MaxMind-format
// database. Default: the country-only database bundled as an npm package, so no account, download or
// network call is needed. Open it once at start; lookups are in-memory tree walks.
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { open, type Reader, type Response } from 'maxmind';
import { BUNDLED_GEO_DATABASE } from './geo-licence.ts';
import { ipv4Value, MAPPED_V4 } from './ipv4.ts';

export interface GeoPlace {
  /** ISO 3166-1 alpha-2, upper-case, or '' when unknown. */
  country: string;
  /** Subdivision name (or code) when the database carries subdivisions, else ''. */
  region: string;
}

export interface GeoLookup {
  lookup(ip: string): GeoPlace;
  close(): void;
}

/**
 * The records we read, across the formats in use: ip-location-db (`country_code`, and `state1` in
 * its city databases) and MaxMind GeoIP2/GeoLite2 or DB-IP (`country.iso_code`, `subdivisions`).
 */
interface GeoRecord {
  country_code?: string;
  state1?: string;
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
  subdivisions?: { iso_code?: string; names?: { en?: string } }[];
}

/** Path of the bundled country database (its licence and attribution: geo-licence.ts). */
export function bundledGeoDatabasePath(): string {
  return createRequire(import.meta.url).resolve(`${BUNDLED_GEO_DATABASE.package}/geo-whois-asn-country.mmdb`);
}

const NOWHERE: GeoPlace = Object.freeze({ country: '', region: '' });
const ISO_COUNTRY = /^[A-Za-z]{2}$/;
const REGION_MAX = 128;

/**
 * IPv4 ranges with no place on the map (RFC 6890 special-purpose registry): this network,
 * private, shared CGNAT, loopback, link-local, protocol assignments, documentation, 6to4 relay,
 * benchmarking, multicast, reserved and broadcast. [first address, prefix length].
 */
const IPV4_SPECIAL: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
];
/** Each range as the bits its addresses share, shifted down, and the shift: compared with integer operations only. */
const SPECIAL_SHIFTS = Int32Array.from(IPV4_SPECIAL, ([, bits]) => 32 - bits);
const SPECIAL_PREFIXES = Uint32Array.from(IPV4_SPECIAL, ([address], i) => ipv4Value(address) >>> SPECIAL_SHIFTS[i]);

/** `value`: an address from ipv4Value. */
function isPublicV4(value: number): boolean {
  for (let i = 0; i < SPECIAL_SHIFTS.length; i++) {
    if (value >>> SPECIAL_SHIFTS[i] === SPECIAL_PREFIXES[i]) return false;
  }
  return true;
}

/** The first two 16-bit groups of an IPv6 address in text; `ip` has passed isIP already. */
function ipv6Head(ip: string): [number, number] {
  if (ip.startsWith('::')) return [0, 0];
  const colon = ip.indexOf(':');
  const first = Number.parseInt(ip.slice(0, colon), 16);
  const secondEnd = ip.indexOf(':', colon + 1);
  const second = secondEnd === colon + 1 ? 0 : Number.parseInt(ip.slice(colon + 1, secondEnd === -1 ? undefined : secondEnd), 16);
  return [first, second];
}

/**
 * Only global unicast (2000::/3) has a place, minus its special blocks: IETF protocol
 * assignments and Teredo (2001:0::/23), documentation (2001:db8::/32, 3fff::/20) and 6to4
 * (2002::/16). Loopback, link-local, unique-local, multicast and the rest lie outside 2000::/3.
 */
function isPublicV6(ip: string): boolean {
  const [first, second] = ipv6Head(ip);
  if ((first & 0xe000) !== 0x2000) return false;
  if (first === 0x2001) return second >= 0x200 && second !== 0x0db8;
  if (first === 0x2002) return false;
  return !(first === 0x3fff && second < 0x1000);
}

/**
 * The address a database can answer for, or null for addresses that have no place: invalid text,
 * private, loopback, link-local, reserved, multicast and the like. IPv4-mapped IPv6 becomes its
 * IPv4 form; IPv6 zone ids are dropped. Hand-rolled rather than ipaddr.js's range(), which costs
 * more than the database lookup itself on the ingest hot path.
 */
function routableAddress(raw: string): string | null {
  let ip = raw.trim();
  // A dotted quad has no zone id and no ::ffff: prefix to take off: nearly every address is one.
  let v4 = ipv4Value(ip);
  if (v4 === -1) {
    const zone = ip.indexOf('%');
    if (zone !== -1) ip = ip.slice(0, zone);
    const mapped = MAPPED_V4.exec(ip);
    if (mapped) ip = mapped[1];
    v4 = ipv4Value(ip);
  }
  if (v4 !== -1) return isPublicV4(v4) ? ip : null;
  return isIP(ip) === 6 && isPublicV6(ip.toLowerCase()) ? ip : null;
}

function placeOf(record: GeoRecord): GeoPlace {
  const code = record.country_code ?? record.country?.iso_code ?? record.registered_country?.iso_code ?? '';
  const country = ISO_COUNTRY.test(code) ? code.toUpperCase() : '';
  const subdivision = record.subdivisions?.[0];
  const region = subdivision?.names?.en ?? subdivision?.iso_code ?? record.state1 ?? '';
  if (country === '' && region === '') return NOWHERE;
  return { country, region: typeof region === 'string' ? region.slice(0, REGION_MAX) : '' };
}

/**
 * Opens a MaxMind-format database (the bundled country database by default). The whole file is
 * read into memory once; decoded records are cached by the reader, so repeated countries cost a
 * tree walk only.
 */
export async function openGeoDatabase(path: string = bundledGeoDatabasePath()): Promise<GeoLookup> {
  let reader: Reader<Response> | null = await open(path, { cache: { max: 5000 } });
  return {
    lookup(ip: string): GeoPlace {
      if (reader === null || typeof ip !== 'string') return NOWHERE;
      const address = routableAddress(ip);
      if (address === null) return NOWHERE;
      let record: GeoRecord | null;
      try {
        // The reader's types cover MaxMind's own layouts only; GeoRecord reads the fields we use.
        record = reader.get(address) as GeoRecord | null;
      } catch {
        return NOWHERE;
      }
      return record ? placeOf(record) : NOWHERE;
    },
    close(): void {
      // Drops the in-memory file so it can be collected; later lookups answer "unknown".
      reader = null;
    },
  };
}
