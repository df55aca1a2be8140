// The favicon proxy's pure parts: which {domain} values are accepted and how they are normalised,
// how the upstream URL is built, and which bodies count as images.
import { describe, expect, it } from '@jest/globals';
import { normaliseFaviconDomain } from '../../lib/favicon/domain.ts';
import { imageTypeOf, sniffImageType, upstreamUrl } from '../../lib/favicon/proxy.ts';

describe('normaliseFaviconDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['www.example.co.uk', 'www.example.co.uk'],
    ['example.com.', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['BÜCHER.de', 'xn--bcher-kva.de'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['my-site.example', 'my-site.example'],
    ['a.b.c.d.e.example', 'a.b.c.d.e.example'],
    ['shop.test', 'shop.test'],
  ])('accepts %s as %s', (input, expected) => {
    expect(normaliseFaviconDomain(input)).toBe(expected);
  });

  it.each([
    ['an empty string', ''],
    ['an IPv4 literal', '127.0.0.1'],
    ['a public IPv4 literal', '93.184.215.14'],
    ['a shortened IPv4', '127.1'],
    ['a hexadecimal IPv4', '0x7f.0.0.1'],
    ['a decimal IPv4', '2130706433'],
    ['an IPv6 literal', '::1'],
    ['a bracketed IPv6 literal', '[::1]'],
    ['an IPv4-mapped IPv6 literal', '[::ffff:127.0.0.1]'],
    ['dot-dot', '..'],
    ['a single dot', '.'],
    ['an empty label', 'a..com'],
    ['a leading dot', '.example.com'],
    ['userinfo', 'a@b.com'],
    ['userinfo with a password', 'user:pw@example.com'],
    ['a port', 'a.com:80'],
    ['a path', 'example.com/favicon.ico'],
    ['a backslash path', 'example.com\\x'],
    ['a query', 'example.com?x=1'],
    ['a fragment', 'example.com#x'],
    ['a percent escape', 'example%2ecom'],
    ['whitespace', 'exa mple.com'],
    ['a control character', 'example.com\n'],
    ['a single label', 'intranet'],
    ['localhost', 'localhost'],
    ['a name under localhost', 'app.localhost'],
    ['a .local name', 'printer.local'],
    ['an .internal name', 'db.internal'],
    ['a reverse-lookup name', '1.0.0.127.in-addr.arpa'],
    ['a label starting with a hyphen', '-bad.example.com'],
    ['a label ending with a hyphen', 'bad-.example.com'],
    ['an underscore', 'under_score.example.com'],
    ['a 64-character label', `${'a'.repeat(64)}.com`],
    ['a numeric top-level label', 'example.123'],
    ['more than 253 characters', `${'abcdefghi.'.repeat(25)}example.com`],
    ['a scheme', 'http://example.com'],
  ])('refuses %s', (_what, input) => {
    expect(normaliseFaviconDomain(input)).toBeNull();
  });

  it('accepts exactly 253 characters', () => {
    const domain = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(domain.length).toBe(253);
    expect(normaliseFaviconDomain(domain)).toBe(domain);
    expect(normaliseFaviconDomain(`${domain}x`)).toBeNull();
  });
});

describe('upstreamUrl', () => {
  it('appends <domain>.ico to the configured path, on the configured host only', () => {
    expect(upstreamUrl('https://icons.duckduckgo.com/ip3/', 'example.com').href).toBe('https://icons.duckduckgo.com/ip3/example.com.ico');
    expect(upstreamUrl('https://icons.example.net/ip3', 'xn--bcher-kva.de').href).toBe('https://icons.example.net/ip3/xn--bcher-kva.de.ico');
    expect(upstreamUrl('http://127.0.0.1:8081/', 'a.example').href).toBe('http://127.0.0.1:8081/a.example.ico');
  });

  it('keeps whatever it is given inside one path segment', () => {
    expect(upstreamUrl('https://icons.example.net/ip3/', 'evil.com/../../x?y#z').href).toBe('https://icons.example.net/ip3/evil.com%2F..%2F..%2Fx%3Fy%23z.ico');
    expect(upstreamUrl('https://icons.example.net/ip3/?key=1#frag', '@other.host').host).toBe('icons.example.net');
  });
});

describe('which bodies are images', () => {
  const bytes = (...values: number[]) => Buffer.from(values);

  it.each([
    ['ICO', bytes(0x00, 0x00, 0x01, 0x00, 0x01, 0x00), 'image/x-icon'],
    ['PNG', bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00), 'image/png'],
    ['GIF', Buffer.from('GIF89a\x01\x00'), 'image/gif'],
    ['JPEG', bytes(0xff, 0xd8, 0xff, 0xe0), 'image/jpeg'],
    ['WebP', Buffer.concat([Buffer.from('RIFF'), bytes(0x10, 0, 0, 0), Buffer.from('WEBPVP8 ')]), 'image/webp'],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'), 'image/svg+xml'],
    ['SVG with a prolog', Buffer.from('\uFEFF<?xml version="1.0"?>\n<!-- logo -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n<svg>'), 'image/svg+xml'],
  ])('sniffs %s', (_what, body, type) => {
    expect(sniffImageType(body)).toBe(type);
  });

  it('does not sniff HTML, JSON or text as an image', () => {
    expect(sniffImageType(Buffer.from('<!doctype html><html><svg></svg></html>'))).toBeNull();
    expect(sniffImageType(Buffer.from('{"svg": true}'))).toBeNull();
    expect(sniffImageType(Buffer.alloc(0))).toBeNull();
  });

  it('trusts the bytes over the label, and an image/* label only for formats it does not sniff', () => {
    expect(imageTypeOf(bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a), 'text/html')).toBe('image/png');
    expect(imageTypeOf(Buffer.from('....ftypavif'), 'image/avif')).toBe('image/avif');
    expect(imageTypeOf(Buffer.from('BM....'), 'Image/BMP; charset=binary')).toBe('image/bmp');
    expect(imageTypeOf(Buffer.from('<html><script>alert(1)</script>'), 'image/svg+xml')).toBeNull();
    expect(imageTypeOf(Buffer.from('<html></html>'), 'text/html; charset=utf-8')).toBeNull();
    expect(imageTypeOf(Buffer.from('<html></html>'), undefined)).toBeNull();
  });
});
