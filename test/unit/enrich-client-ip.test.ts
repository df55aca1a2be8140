// clientIp: which address is the visitor's. X-Forwarded-For counts only as far as proxies are trusted.
import { describe, expect, it } from '@jest/globals';
import { clientIp } from '../../lib/ingest/enrich/client-ip.ts';

describe('clientIp', () => {
  it('uses the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientIp('203.0.113.7', { 'x-forwarded-for': '198.51.100.1' }, 0)).toBe('203.0.113.7');
    expect(clientIp('203.0.113.7', {}, 0)).toBe('203.0.113.7');
  });

  it('takes the n-th X-Forwarded-For entry from the right with n trusted hops', () => {
    const headers = { 'x-forwarded-for': '192.0.2.66, 198.51.100.1, 10.0.0.2' };
    expect(clientIp('10.0.0.3', headers, 1)).toBe('10.0.0.2');
    expect(clientIp('10.0.0.3', headers, 2)).toBe('198.51.100.1');
    expect(clientIp('10.0.0.3', headers, 3)).toBe('192.0.2.66');
  });

  it('ignores what the client wrote left of the trusted entries, even garbage', () => {
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': 'not-an-ip, <script>, 198.51.100.1' }, 1)).toBe('198.51.100.1');
  });

  it('takes the leftmost entry when the header is shorter than the hop count', () => {
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '198.51.100.1' }, 2)).toBe('198.51.100.1');
  });

  it('falls back to the socket address when a trusted entry is not an IP or the header is missing', () => {
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '198.51.100.1, unknown' }, 1)).toBe('10.0.0.3');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': 'garbage, 198.51.100.1' }, 2)).toBe('10.0.0.3');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '' }, 1)).toBe('10.0.0.3');
    expect(clientIp('10.0.0.3', {}, 1)).toBe('10.0.0.3');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '999.1.1.1' }, 1)).toBe('10.0.0.3');
  });

  it('joins repeated X-Forwarded-For headers in order', () => {
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': ['192.0.2.66', '198.51.100.1'] }, 2)).toBe('192.0.2.66');
  });

  it('strips the ::ffff: prefix, IPv6 zone ids, brackets and ports', () => {
    expect(clientIp('::ffff:203.0.113.7', {}, 0)).toBe('203.0.113.7');
    expect(clientIp('::FFFF:203.0.113.7', {}, 0)).toBe('203.0.113.7');
    expect(clientIp('fe80::1%eth0', {}, 0)).toBe('fe80::1');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '[2001:DB8::1]:443' }, 1)).toBe('2001:db8::1');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '203.0.113.7:51234' }, 1)).toBe('203.0.113.7');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': ' ::ffff:198.51.100.1 ' }, 1)).toBe('198.51.100.1');
    expect(clientIp('10.0.0.3', { 'x-forwarded-for': '2001:db8::2' }, 1)).toBe('2001:db8::2');
  });

  it('answers an empty string when no address is known', () => {
    expect(clientIp(undefined, {}, 0)).toBe('');
    expect(clientIp(undefined, { 'x-forwarded-for': 'garbage' }, 1)).toBe('');
    expect(clientIp('not-an-address', {}, 0)).toBe('');
  });
});
