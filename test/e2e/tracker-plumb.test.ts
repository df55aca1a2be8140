// The whole collection path in a real browser: a page on its own origin loads /plumb.js from a
// running Plumb node; pageviews, SPA navigations, a custom event, an outbound click and a
// download end up in the analytics store with the right fields.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { createSite } from '../../lib/sites/sites.ts';
import { launchChromium } from '../support/browser.ts';
import { freePort } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let browser: Browser;
let pages: Server;
let pageOrigin: string;
let siteId: string;

function page(plumbUrl: string): string {
  return `<!doctype html><html><head><title>Shop</title>
<script>window.plumb = window.plumb || function () { (window.plumb.q = window.plumb.q || []).push(arguments) };</script>
<script defer src="${plumbUrl}/plumb.js" data-allow-localhost></script></head>
<body><h1>Shop</h1>
<a id="outbound" href="https://docs.example.org/guide">Docs</a>
<a id="download" href="/files/price-list.pdf">Price list</a>
<button id="signup" onclick="plumb('event', 'Signup', { plan: 'pro', seats: 3 })">Sign up</button>
</body></html>`;
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_INGEST_RATE_PER_SECOND: '1000', PLUMB_INGEST_BURST: '1000' });
  // Chromium resolves *.localhost to loopback, so the page gets a real hostname of its own.
  const port = await freePort();
  pageOrigin = `http://shop.localhost:${port}`;
  siteId = (await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain: 'shop.localhost' })).id;
  pages = createServer((req, res) => {
    if ((req.url ?? '').startsWith('/files/')) {
      res.writeHead(200, { 'Content-Type': 'application/pdf' });
      res.end('%PDF-1.4');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(page(t.url));
  });
  await new Promise<void>((resolve) => pages.listen(port, '127.0.0.1', resolve));
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await t?.stop();
});

describe('plumb.js on a customer page, stored by Plumb', () => {
  it('stores pageviews, SPA navigations, a custom event, an outbound click and a download', async () => {
    const context = await browser.newContext({ userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' });
    // The outbound link and the download must not leave the test: answer them locally.
    await context.route('https://docs.example.org/**', (route) => route.fulfill({ status: 200, body: 'docs' }));
    const tab = await context.newPage();
    await tab.goto(`${pageOrigin}/landing?utm_source=chatgpt.com`, { waitUntil: 'load' });
    await t.rows('hits', 1, 'site_id = {site:UUID}', { site: siteId });

    await tab.evaluate(() => history.pushState({}, '', '/pricing'));
    await tab.waitForTimeout(1100);
    await tab.evaluate(() => history.pushState({}, '', '/checkout'));
    await tab.click('#signup');
    await tab.click('#download', { modifiers: ['Alt'] });
    await tab.click('#outbound');
    await tab.waitForURL('https://docs.example.org/guide');

    const hits = await t.rows<{ path: string; is_entry: number; channel: string; referrer_source: string; browser: string; device: string }>('hits', 3, 'site_id = {site:UUID}', {
      site: siteId,
    });
    expect(hits.map((h) => [h.path, h.is_entry])).toEqual([
      ['/landing', 1],
      ['/pricing', 0],
      ['/checkout', 0],
    ]);
    expect(hits[0]).toMatchObject({ channel: 'ai', referrer_source: 'ChatGPT', browser: 'Chrome', device: 'desktop' });

    const events = await t.rows<{ name: string; props: Record<string, string>; path: string }>('events', 3, "site_id = {site:UUID} AND name != '$engagement'", { site: siteId });
    expect(events.map((e) => [e.name, e.path, e.props])).toEqual([
      ['Signup', '/checkout', { plan: 'pro', seats: '3' }],
      ['File Download', '/checkout', { url: `${pageOrigin}/files/price-list.pdf` }],
      ['Outbound Link: Click', '/checkout', { url: 'https://docs.example.org/guide' }],
    ]);
    const engagement = await t.rows<{ path: string }>('events', 1, "site_id = {site:UUID} AND name = '$engagement'", { site: siteId });
    expect(engagement.map((e) => e.path)).toContain('/landing');
    expect(await context.cookies()).toEqual([]);
    await context.close();
  }, 60_000);
});
