// visitorHash: the cookieless visitor id, a keyed hash that is stable within a salt and unlinkable
// across salts and sites. Expected ids were computed independently (Python hmac, SHA-256).
import { describe, expect, it } from '@jest/globals';
import { VISITOR_ID_CACHE_SIZE, visitorHash } from '../../lib/ingest/enrich/visitor.ts';

const saltA = Uint8Array.from({ length: 32 }, (_, i) => i);
const saltB = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
const site = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const otherSite = '0b8e7d5a-3f1c-4e2b-9a6d-5c4f3e2d1b0a';
const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('visitorHash', () => {
  it('is the first 8 bytes of HMAC-SHA256(salt, site NUL ip NUL ua) as an unsigned decimal', () => {
    expect(visitorHash(saltA, site, '203.0.113.7', chrome)).toBe('9410092703030159816');
    expect(visitorHash(saltA, site, '2001:db8::1', 'curl/8.5.0')).toBe('3579266630473381433');
  });

  it('is stable for the same inputs and salt', () => {
    expect(visitorHash(saltA, site, '203.0.113.7', chrome)).toBe(visitorHash(saltA, site, '203.0.113.7', chrome));
  });

  it('gives the same id for a copy of the salt', () => {
    expect(visitorHash(Uint8Array.from(saltA), site, '203.0.113.7', chrome)).toBe('9410092703030159816');
    expect(visitorHash(Buffer.from(saltB), site, '203.0.113.7', chrome)).toBe('4171026107475120283');
  });

  it('changes with the salt, the site and the IP', () => {
    expect(visitorHash(saltB, site, '203.0.113.7', chrome)).toBe('4171026107475120283');
    expect(visitorHash(saltA, otherSite, '203.0.113.7', chrome)).toBe('15708150890747355393');
    expect(visitorHash(saltA, site, '203.0.113.8', chrome)).toBe('12572669393766208144');
  });

  it('separates fields, so moving a character between them changes the id', () => {
    expect(visitorHash(saltA, 'ab', 'c', '')).toBe('6418265086718103125');
    expect(visitorHash(saltA, 'a', 'bc', '')).toBe('14014567051997404511');
  });

  it('fits a ClickHouse UInt64: digits only, at most 2^64 - 1', () => {
    const id = visitorHash(saltB, otherSite, '198.51.100.1', chrome);
    expect(id).toMatch(/^\d{1,20}$/);
    expect(BigInt(id) <= 18446744073709551615n).toBe(true);
  });

  it('never answers an id remembered under another salt', () => {
    for (let round = 0; round < 2; round++) {
      expect(visitorHash(saltA, site, '203.0.113.7', chrome)).toBe('9410092703030159816');
      expect(visitorHash(saltB, site, '203.0.113.7', chrome)).toBe('4171026107475120283');
    }
  });

  it('answers each visitor at one address their own id, whichever came last', () => {
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
    const turns = () => [visitorHash(saltA, site, '203.0.113.7', chrome), visitorHash(saltA, site, '203.0.113.7', firefox), visitorHash(saltA, otherSite, '203.0.113.7', chrome)];
    const first = turns();
    expect(first[0]).toBe('9410092703030159816');
    expect(first[2]).toBe('15708150890747355393');
    expect(new Set(first).size).toBe(3);
    expect(turns()).toEqual(first);
    // Each again right after itself (answered from memory), then the first once more.
    expect([visitorHash(saltA, site, '203.0.113.7', firefox), visitorHash(saltA, site, '203.0.113.7', firefox)]).toEqual([first[1], first[1]]);
    expect(visitorHash(saltA, site, '203.0.113.7', chrome)).toBe('9410092703030159816');
  });

  it('still answers the right id once more visitors than it remembers have passed', () => {
    expect(visitorHash(saltA, site, '203.0.113.7', chrome)).toBe('9410092703030159816');
    for (let i = 0; i <= VISITOR_ID_CACHE_SIZE; i++) visitorHash(saltA, site, `10.0.${i >> 8}.${i & 255}`, chrome);
    expect(visitorHash(saltA, site, '203.0.113.7', chrome)).toBe('9410092703030159816');
    expect(visitorHash(saltA, site, '203.0.113.8', chrome)).toBe('12572669393766208144');
  });
});
