// parsePageUrl: hostname (www. folded), path without query or fragment, and the UTM fields.
import { describe, expect, it } from '@jest/globals';
import { parsePageUrl } from '../../lib/ingest/enrich/url.ts';

const noUtm = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' };

describe('parsePageUrl', () => {
  it('lower-cases the hostname and folds www.', () => {
    expect(parsePageUrl('https://WWW.Example.COM/Pricing')).toEqual({ hostname: 'example.com', path: '/Pricing', utm: noUtm });
    expect(parsePageUrl('http://blog.example.com./')).toEqual({ hostname: 'blog.example.com', path: '/', utm: noUtm });
  });

  it('keeps only the path: no query, no fragment, no port', () => {
    expect(parsePageUrl('https://example.com:8443/docs/intro?token=secret&email=a%40b.c#install')).toEqual({
      hostname: 'example.com',
      path: '/docs/intro',
      utm: noUtm,
    });
    expect(parsePageUrl('https://example.com')).toEqual({ hostname: 'example.com', path: '/', utm: noUtm });
  });

  it('leaves percent-escapes as sent', () => {
    expect(parsePageUrl('https://example.com/caf%C3%A9/a%20b')?.path).toBe('/caf%C3%A9/a%20b');
  });

  it('caps the path at 1024 characters', () => {
    const page = parsePageUrl(`https://example.com/${'a'.repeat(2000)}`);
    expect(page?.path.length).toBe(1024);
    expect(page?.path.startsWith('/aaaa')).toBe(true);
  });

  it('reads the five UTM parameters, decoded', () => {
    expect(
      parsePageUrl('https://example.com/?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale&utm_term=running+shoes&utm_content=header')?.utm,
    ).toEqual({ utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring sale', utm_term: 'running shoes', utm_content: 'header' });
  });

  it('takes source, then ref, when utm_source is missing', () => {
    expect(parsePageUrl('https://example.com/?ref=producthunt')?.utm.utm_source).toBe('producthunt');
    expect(parsePageUrl('https://example.com/?source=hn&ref=producthunt')?.utm.utm_source).toBe('hn');
    expect(parsePageUrl('https://example.com/?utm_source=chatgpt.com&ref=producthunt')?.utm.utm_source).toBe('chatgpt.com');
  });

  it('caps each UTM value at 256 characters and trims it', () => {
    const utm = parsePageUrl(`https://example.com/?utm_campaign=${'c'.repeat(300)}&utm_source=%20x%20`)?.utm;
    expect(utm?.utm_campaign).toBe('c'.repeat(256));
    expect(utm?.utm_source).toBe('x');
  });

  it('answers null for other schemes and unparsable text', () => {
    expect(parsePageUrl('ftp://example.com/file')).toBeNull();
    expect(parsePageUrl('javascript:alert(1)')).toBeNull();
    expect(parsePageUrl('file:///etc/passwd')).toBeNull();
    expect(parsePageUrl('/relative/path')).toBeNull();
    expect(parsePageUrl('not a url')).toBeNull();
    expect(parsePageUrl('')).toBeNull();
    expect(parsePageUrl('http://')).toBeNull();
  });

  it('keeps IDN hostnames in their ASCII form', () => {
    expect(parsePageUrl('https://www.bücher.de/')?.hostname).toBe('xn--bcher-kva.de');
  });

  it('answers a URL seen before with the same frozen page, and each URL with its own', () => {
    const url = 'https://shop.example/cart?utm_source=mail';
    const page = parsePageUrl(url);
    expect(parsePageUrl(url)).toBe(page);
    expect(Object.isFrozen(page)).toBe(true);
    expect(Object.isFrozen(page?.utm)).toBe(true);
    expect(parsePageUrl('https://shop.example/checkout')).toEqual({ hostname: 'shop.example', path: '/checkout', utm: expect.objectContaining({ utm_source: '' }) });
    expect(parsePageUrl('ftp://shop.example/cart')).toBeNull();
    expect(parsePageUrl('ftp://shop.example/cart')).toBeNull();
    // A long URL is parsed each time, to the same answer.
    const long = `https://shop.example/${'p'.repeat(600)}`;
    expect(parsePageUrl(long)).not.toBe(parsePageUrl(long));
    expect(parsePageUrl(long)).toEqual(parsePageUrl(long));
  });
});
