// What the add-site form makes of what people type: a pasted address becomes the domain the site
// is keyed by, and a few letters find the time zone they mean.
import { describe, expect, it } from '@jest/globals';
import { exactZone, matchZones, zoneOffset } from '../../web/src/components/time-zones.ts';
import { cleanDomain } from '../../web/src/forms.ts';

describe('cleanDomain', () => {
  it.each([
    ['https://Shop.Example.com/', 'shop.example.com'],
    ['shop.example.com/path?q', 'shop.example.com'],
    ['www.shop.example.com', 'shop.example.com'],
    ['  http://WWW.Shop.Example.com:8080/checkout#pay ', 'shop.example.com'],
    ['https://user:secret@shop.example.com/', 'shop.example.com'],
    ['shop.example.com.', 'shop.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['shop.example.com', 'shop.example.com'],
  ])('makes %j the domain %j', (typed, domain) => {
    expect(cleanDomain(typed)).toBe(domain);
  });

  it('leaves text that is no address as typed (trimmed), for the form to name the problem', () => {
    expect(cleanDomain('  my shop ')).toBe('my shop');
    expect(cleanDomain('   ')).toBe('');
  });
});

describe('matchZones', () => {
  it('finds a city from its first letters, whatever the case', () => {
    expect(matchZones('berl')[0]).toBe('Europe/Berlin');
    expect(matchZones('BERL')[0]).toBe('Europe/Berlin');
  });

  it('reads spaces as the underscores of zone names', () => {
    expect(matchZones('new york')[0]).toBe('America/New_York');
  });

  it('puts a city that starts with the text first, then a word that does, then any part of a name', () => {
    expect(matchZones('sal')).toEqual(['America/Argentina/Salta', 'Africa/Dar_es_Salaam', 'America/El_Salvador', 'America/North_Dakota/New_Salem', 'Asia/Jerusalem']);
  });

  it('lists every zone, UTC first, when nothing is typed, and nothing for text no zone holds', () => {
    const all = matchZones('');
    expect(all[0]).toBe('UTC');
    expect(all.length).toBeGreaterThan(300);
    expect(matchZones('qqq')).toEqual([]);
  });
});

describe('exactZone', () => {
  it('accepts a zone typed in full in any case, with spaces for underscores', () => {
    expect(exactZone('europe/berlin')).toBe('Europe/Berlin');
    expect(exactZone('America/New York')).toBe('America/New_York');
    expect(exactZone('utc')).toBe('UTC');
  });

  it('refuses a part of a name and what names no zone', () => {
    expect(exactZone('berl')).toBeNull();
    expect(exactZone('Mars/Olympus')).toBeNull();
    expect(exactZone('')).toBeNull();
  });
});

describe('zoneOffset', () => {
  it("says a zone's offset from UTC at a given moment", () => {
    expect(zoneOffset('Europe/Berlin', new Date('2026-01-15T12:00:00Z'))).toBe('UTC+1');
    expect(zoneOffset('Europe/Berlin', new Date('2026-07-15T12:00:00Z'))).toBe('UTC+2');
    expect(zoneOffset('America/St_Johns', new Date('2026-01-15T12:00:00Z'))).toBe('UTC−3:30');
    expect(zoneOffset('UTC', new Date('2026-01-15T12:00:00Z'))).toBe('UTC');
  });
});
