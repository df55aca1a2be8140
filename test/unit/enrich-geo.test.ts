// openGeoDatabase: country from the bundled offline database (registry countries of well-known
// public resolvers and registries), region from any MaxMind-format city database, nothing (and no
// throw) for private, reserved or invalid addresses.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helpText } from '../../lib/config.ts';
import { type GeoLookup, openGeoDatabase } from '../../lib/ingest/enrich/geo.ts';
import { BUNDLED_GEO_DATABASE } from '../../lib/ingest/enrich/geo-licence.ts';

const nowhere = { country: '', region: '' };

describe('openGeoDatabase (bundled country database)', () => {
  let geo: GeoLookup;
  beforeAll(async () => {
    geo = await openGeoDatabase();
  });
  afterAll(() => geo.close());

  it('finds the registry country of well-known public addresses', () => {
    expect(geo.lookup('8.8.8.8')).toEqual({ country: 'US', region: '' });
    // Cloudflare's resolver sits in APNIC's 1.0.0.0/8 research block, registered in Australia.
    expect(geo.lookup('1.1.1.1')).toEqual({ country: 'AU', region: '' });
    expect(geo.lookup('193.0.6.139')).toEqual({ country: 'NL', region: '' });
    expect(geo.lookup('2001:4860:4860::8888')).toEqual({ country: 'US', region: '' });
    expect(geo.lookup('2001:67c:2e8::1')).toEqual({ country: 'NL', region: '' });
  });

  it('reads IPv4-mapped IPv6 as IPv4 and drops zone ids', () => {
    expect(geo.lookup('::ffff:8.8.8.8')).toEqual({ country: 'US', region: '' });
    expect(geo.lookup('::FFFF:193.0.6.139')).toEqual({ country: 'NL', region: '' });
  });

  it('answers nothing for private, loopback, link-local and reserved addresses', () => {
    for (const ip of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '127.0.0.1', '169.254.1.1', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1', '192.0.2.1', '::1', '::', 'fe80::1%eth0', 'fc00::1', '2001:db8::1', '::ffff:192.168.0.1']) {
      expect(geo.lookup(ip)).toEqual(nowhere);
    }
  });

  it('answers nothing for IPv6 special blocks inside global unicast', () => {
    // 6to4, Teredo, IETF protocol assignments, documentation (old and new), multicast, ULA, NAT64.
    for (const ip of ['2002:c000:204::1', '2001::1', '2001:1ff::1', '3fff::1', 'ff02::1', 'fd12:3456::1', '64:ff9b::808:808']) {
      expect(geo.lookup(ip)).toEqual(nowhere);
    }
  });

  it('draws the private-range borders exactly: the neighbours of 172.16/12 and 100.64/10 have a country', () => {
    for (const ip of ['172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '223.255.255.254']) {
      expect(geo.lookup(ip).country).toMatch(/^[A-Z]{2}$/);
    }
    for (const ip of ['172.31.255.255', '100.127.255.255', '198.19.255.255', '224.0.0.0', '240.0.0.1']) {
      expect(geo.lookup(ip)).toEqual(nowhere);
    }
  });

  it('answers nothing, without throwing, for text that is not an IP', () => {
    for (const ip of ['', 'not-an-ip', '999.1.1.1', '1.2.3', '1.2.3.4.5', '8.8.8.8:53', ':::1', 'x'.repeat(10_000)]) {
      expect(geo.lookup(ip)).toEqual(nowhere);
    }
    expect(geo.lookup(undefined as unknown as string)).toEqual(nowhere);
  });
});

describe('the bundled database\'s notice', () => {
  const installed = (file: string) => readFileSync(createRequire(import.meta.url).resolve(`@ip-location-db/geo-whois-asn-country-mmdb/${file}`), 'utf8');

  it('states the licence the installed package declares', () => {
    const { license } = JSON.parse(installed('package.json')) as { license: string };
    expect(BUNDLED_GEO_DATABASE.licence).toBe(license);
    expect(BUNDLED_GEO_DATABASE.attribution).toContain(`@ip-location-db/geo-whois-asn-country-mmdb (${license})`);
  });

  it('credits the NRO under CC BY 4.0, as the licence of the data shipped with the package asks', () => {
    const dataLicence = installed('NRO_LICENSE');
    expect(dataLicence).toContain('Creative Commons Attribution 4.0');
    expect(dataLicence).toContain('Number Resource Organization');
    expect(BUNDLED_GEO_DATABASE.attribution).toContain('© Number Resource Organization (nro.net), CC BY 4.0');
  });

  it('is printed by --help and the README, which promise countries only from it', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const text of [helpText(), readme]) {
      expect(text).toContain(BUNDLED_GEO_DATABASE.attribution);
      expect(text).toContain('country only');
      expect(text).not.toContain('country/region');
    }
  });
});

/**
 * A minimal MaxMind DB writer (format 2.0, IPv4 tree, 24-bit records) so a city database with
 * subdivisions can be tested without shipping a licensed file.
 */
function encode(value: unknown): Buffer {
  const control = (type: number, size: number) =>
    type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7]);
  const unsigned = (type: number, n: number) => {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
  };
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'number') return unsigned(6, value);
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  const entries = Object.entries(value as Record<string, unknown>);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}

function writeMmdb(path: string, networks: [cidr: string, record: object][]): void {
  type Slot = number | { data: number } | null;
  const nodes: [Slot, Slot][] = [[null, null]];
  const data: Buffer[] = [];
  let dataSize = 0;
  for (const [cidr, record] of networks) {
    const [address, bitsText] = cidr.split('/');
    const bits = Number(bitsText);
    const value = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
    const encoded = encode(record);
    const offset = dataSize;
    data.push(encoded);
    dataSize += encoded.length;
    let node = 0;
    for (let depth = 0; depth < bits; depth++) {
      const bit = Math.floor(value / 2 ** (31 - depth)) % 2;
      if (depth === bits - 1) nodes[node][bit] = { data: offset };
      else {
        if (typeof nodes[node][bit] !== 'number') nodes[node][bit] = nodes.push([null, null]) - 1;
        node = nodes[node][bit] as number;
      }
    }
  }
  const count = nodes.length;
  const tree = Buffer.alloc(count * 6);
  const slot = (s: Slot) => (s === null ? count : typeof s === 'number' ? s : count + 16 + s.data);
  nodes.forEach(([left, right], i) => {
    tree.writeUIntBE(slot(left), i * 6, 3);
    tree.writeUIntBE(slot(right), i * 6 + 3, 3);
  });
  const metadata = encode({
    node_count: count,
    record_size: 24,
    ip_version: 4,
    database_type: 'Test-City',
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000,
    description: { en: 'Plumb test city database' },
  });
  const marker = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');
  writeFileSync(path, Buffer.concat([tree, Buffer.alloc(16), ...data, marker, metadata]));
}

describe('openGeoDatabase (a city database)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-geo-'));
  let geo: GeoLookup;
  beforeAll(async () => {
    const path = join(dir, 'city.mmdb');
    writeMmdb(path, [
      // MaxMind GeoIP2/GeoLite2 and DB-IP layout.
      ['81.2.69.0/24', { country: { iso_code: 'GB' }, subdivisions: [{ iso_code: 'ENG', names: { en: 'England', de: 'England' } }] }],
      ['175.16.199.0/24', { country: { iso_code: 'CN' }, subdivisions: [{ iso_code: '22' }] }],
      ['202.196.224.0/20', { registered_country: { iso_code: 'PH' } }],
      // ip-location-db city layout.
      ['89.160.20.0/24', { country_code: 'SE', state1: 'Östergötland County', city: 'Linköping' }],
      ['192.168.7.0/24', { country_code: 'DE', state1: 'Berlin' }],
    ]);
    geo = await openGeoDatabase(path);
  });
  afterAll(() => {
    geo.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('yields the subdivision name as region, else its code', () => {
    expect(geo.lookup('81.2.69.142')).toEqual({ country: 'GB', region: 'England' });
    expect(geo.lookup('175.16.199.5')).toEqual({ country: 'CN', region: '22' });
  });

  it('falls back to the registered country', () => {
    expect(geo.lookup('202.196.230.1')).toEqual({ country: 'PH', region: '' });
  });

  it('reads ip-location-db city records (country_code, state1)', () => {
    expect(geo.lookup('89.160.20.112')).toEqual({ country: 'SE', region: 'Östergötland County' });
    expect(geo.lookup('::ffff:89.160.20.1')).toEqual({ country: 'SE', region: 'Östergötland County' });
  });

  it('answers nothing outside its networks and for private ranges even when the file maps them', () => {
    expect(geo.lookup('81.2.70.1')).toEqual(nowhere);
    expect(geo.lookup('192.168.7.10')).toEqual(nowhere);
  });

  it('answers nothing once closed', async () => {
    const other = await openGeoDatabase(join(dir, 'city.mmdb'));
    other.close();
    expect(other.lookup('81.2.69.142')).toEqual(nowhere);
  });
});

describe('openGeoDatabase (bad paths)', () => {
  it('rejects a missing file', async () => {
    await expect(openGeoDatabase('/nonexistent/plumb/geo.mmdb')).rejects.toThrow();
  });
});
