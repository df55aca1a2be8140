// resourceType: the kind of resource an AI agent fetched, from Content-Type first, else the path.
import { describe, expect, it } from '@jest/globals';
import { resourceType } from '../../lib/ingest/enrich/resource-type.ts';

describe('resourceType', () => {
  it('reads the content type first, ignoring parameters and case', () => {
    expect(resourceType('/anything', 'text/html; charset=utf-8')).toBe('html');
    expect(resourceType('/page', 'application/xhtml+xml')).toBe('html');
    expect(resourceType('/report', 'application/pdf')).toBe('document');
    expect(resourceType('/f', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toBe('document');
    expect(resourceType('/f', 'application/vnd.oasis.opendocument.text')).toBe('document');
    expect(resourceType('/f', 'application/msword')).toBe('document');
    expect(resourceType('/llms.txt', 'text/plain; charset=UTF-8')).toBe('document');
    expect(resourceType('/readme', 'text/markdown')).toBe('document');
    expect(resourceType('/data', 'text/csv')).toBe('document');
    expect(resourceType('/book', 'application/epub+zip')).toBe('document');
    expect(resourceType('/logo', 'IMAGE/PNG')).toBe('image');
    expect(resourceType('/logo.svg', 'image/svg+xml')).toBe('image');
  });

  it('lets a specific content type win over the extension', () => {
    expect(resourceType('/download.php', 'application/pdf')).toBe('document');
    expect(resourceType('/photo.html', 'image/jpeg')).toBe('image');
    expect(resourceType('/api/items', 'application/json')).toBe('other');
    expect(resourceType('/index.html', 'text/css')).toBe('other');
  });

  it('falls back to the path when the content type is missing or generic', () => {
    expect(resourceType('/whitepaper.PDF')).toBe('document');
    expect(resourceType('/files/sheet.xlsx', 'application/octet-stream')).toBe('document');
    expect(resourceType('/img/hero.webp', '')).toBe('image');
  });

  it('treats paths without an extension and server pages as html', () => {
    expect(resourceType('/')).toBe('html');
    expect(resourceType('')).toBe('html');
    expect(resourceType('/blog/my-post')).toBe('html');
    expect(resourceType('/blog/')).toBe('html');
    expect(resourceType('/about.htm')).toBe('html');
    expect(resourceType('/index.php')).toBe('html');
    expect(resourceType('/default.aspx')).toBe('html');
  });

  it('takes the path of a full URL and ignores query and fragment', () => {
    expect(resourceType('https://example.com/docs/guide.pdf?download=1#page=2')).toBe('document');
    expect(resourceType('https://example.com')).toBe('html');
    expect(resourceType('https://example.com/v1.2/pricing')).toBe('html');
    expect(resourceType('/search?q=report.pdf')).toBe('html');
  });

  it('calls scripts, styles, feeds and media other', () => {
    expect(resourceType('/app.js')).toBe('other');
    expect(resourceType('/style.css')).toBe('other');
    expect(resourceType('/feed.xml')).toBe('other');
    expect(resourceType('/video.mp4')).toBe('other');
    expect(resourceType('/sitemap.xml', 'application/xml')).toBe('other');
  });
});
