// GET /api/favicon/{domain} through a real node against a local upstream: images relayed with the
// 24-hour header and an ETag; every upstream failure a placeholder, never a 5xx; one upstream
// request per domain, under concurrency and after a restart; hostile domains refused; strangers
// get icons only of registered sites; the disk cache keeps a bounded number of entries.
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PLACEHOLDER_ICON } from '../../lib/favicon/placeholder.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { gatewayOf } from '../../services/api.service.ts';
import createFaviconService from '../../services/favicon.service.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const ICO = Buffer.from([0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x10, 0x10, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1"/></svg>');
const DAY = 'public, max-age=86400';
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'";
const TEST_TIMEOUT_MS = 300;

let t: TestNode;
let upstream: Server;
const asked: string[] = [];
const count = (path: string) => asked.filter((p) => p === path).length;

function send(res: ServerResponse, status: number, type: string, body: Buffer | string) {
  res.writeHead(status, { 'Content-Type': type });
  res.end(body);
}

const upstreamRoutes: Record<string, (res: ServerResponse) => void> = {
  '/icon.example.ico': (res) => send(res, 200, 'image/x-icon', ICO),
  '/news.ycombinator.com.ico': (res) => send(res, 200, 'image/x-icon', ICO),
  '/etag.example.ico': (res) => send(res, 200, 'image/x-icon', ICO),
  '/png.example.ico': (res) => send(res, 200, 'application/octet-stream', PNG),
  '/svg.example.ico': (res) => send(res, 200, 'image/svg+xml', SVG),
  '/xn--bcher-kva.example.ico': (res) => send(res, 200, 'image/png', PNG),
  '/slow.example.ico': (res) => setTimeout(() => send(res, 200, 'image/x-icon', ICO), TEST_TIMEOUT_MS + 700),
  '/redirect.example.ico': (res) => {
    res.writeHead(302, { Location: '/icon.example.ico' });
    res.end();
  },
  '/huge.example.ico': (res) => send(res, 200, 'image/x-icon', Buffer.concat([ICO, Buffer.alloc(200 * 1024)])),
  '/html.example.ico': (res) => send(res, 200, 'text/html; charset=utf-8', '<!doctype html><title>Not found</title>'),
  '/missing.example.ico': (res) => send(res, 404, 'image/x-icon', ICO),
  '/crowd.example.ico': (res) => setTimeout(() => send(res, 200, 'image/x-icon', ICO), 100),
  '/restart.example.ico': (res) => send(res, 200, 'image/png', PNG),
  '/flaky.example.ico': (res) => send(res, 500, 'text/plain', 'oops'),
  '/example.com.ico': (res) => send(res, 200, 'image/x-icon', ICO),
  '/shop.example.net.ico': (res) => send(res, 200, 'image/png', PNG),
  '/lru-a.example.ico': (res) => send(res, 200, 'image/x-icon', ICO),
  '/lru-b.example.ico': (res) => send(res, 200, 'image/x-icon', ICO),
  '/lru-c.example.ico': (res) => send(res, 200, 'image/x-icon', ICO),
};

/** Swaps the node's favicon service for one built by the test (short timeout, or another config). */
async function replaceFaviconService(runtime: Runtime, options: { maxDiskEntries?: number } = {}) {
  const broker = t.node.broker;
  await broker.destroyService(broker.getLocalService('favicon')!);
  broker.createService(createFaviconService(runtime, { timeoutMs: TEST_TIMEOUT_MS, ...options }));
  await broker.waitForServices('favicon');
  gatewayOf(broker).refreshRoutes();
}

/** A signed-in caller's API token: such callers may ask for any domain's icon. */
let token = '';

const icon = async (domain: string, headers: Record<string, string> = {}, signedIn = true) => {
  const res = await fetch(`${t.url}/api/favicon/${domain}`, { headers: signedIn ? { Authorization: `Bearer ${token}`, ...headers } : headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
};

beforeAll(async () => {
  upstream = createServer((req, res) => {
    asked.push(req.url ?? '');
    (upstreamRoutes[req.url ?? ''] ?? ((r: ServerResponse) => send(r, 404, 'text/plain', 'no')))(res);
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const port = (upstream.address() as { port: number }).port;
  t = await startTestNode({
    PLUMB_FAVICON_UPSTREAM: `http://127.0.0.1:${port}/`,
    PLUMB_FAVICON_ALLOW_PRIVATE_UPSTREAM: 'true',
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
  });
  await replaceFaviconService(t.node.runtime);
  token = await t.token(['stats:read']);
}, 60_000);

afterAll(async () => {
  await t.stop();
  upstream.closeAllConnections();
  upstream.close();
});

describe('GET /api/favicon/:domain relays the upstream image', () => {
  it('answers the image with its type, the 24-hour header, nosniff and an ETag', async () => {
    const res = await icon('icon.example');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    expect(res.headers.get('cache-control')).toBe(DAY);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    // Every API answer's policy: nothing loads in it, nothing frames it.
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.body).toEqual(ICO);
    expect(count('/icon.example.ico')).toBe(1);
  });

  it('answers 304 to a matching If-None-Match, with the same validators and header', async () => {
    const first = await icon('etag.example');
    const etag = first.headers.get('etag')!;
    const again = await icon('etag.example', { 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe(DAY);
    expect((await icon('etag.example', { 'If-None-Match': `"other", W/${etag}` })).status).toBe(304);
    expect((await icon('etag.example', { 'If-None-Match': '"something-else"' })).status).toBe(200);
    expect(count('/etag.example.ico')).toBe(1);
  });

  it('relays by the sniffed type when the upstream labels an image wrongly', async () => {
    const res = await icon('png.example');
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 200, type: 'image/png' });
    expect(res.body).toEqual(PNG);
  });

  it('relays SVG with a Content-Security-Policy that keeps it inert', async () => {
    const res = await icon('svg.example');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('content-security-policy')).toBe(SVG_CSP);
    expect(res.body).toEqual(SVG);
  });

  it('asks the upstream for the normalised ASCII name', async () => {
    const res = await icon(encodeURIComponent('BÜCHER.example'));
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 200, type: 'image/png' });
    expect(count('/xn--bcher-kva.example.ico')).toBe(1);
  });
});

describe('GET /api/favicon/source/:name', () => {
  const sourceIcon = async (name: string, signedIn = false) => {
    const res = await fetch(`${t.url}/api/favicon/source/${encodeURIComponent(name)}`, { headers: signedIn ? { Authorization: `Bearer ${token}` } : {} });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  };

  it("answers a named source's icon from its home host (Hacker News → news.ycombinator.com)", async () => {
    const res = await sourceIcon('Hacker News');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe(DAY);
    expect(res.body.equals(ICO)).toBe(true);
    expect(count('/news.ycombinator.com.ico')).toBe(1);
  });

  it('answers a signed-in caller the icon of a source that is a referring hostname', async () => {
    const res = await sourceIcon('png.example', true);
    expect(res.status).toBe(200);
    expect(res.body.equals(PNG)).toBe(true);
  });

  it('answers the placeholder for a name Plumb does not know, without asking the upstream', async () => {
    const before = asked.length;
    const res = await sourceIcon('Spring newsletter');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(PLACEHOLDER_ICON);
    expect(asked.length).toBe(before);
  });

  it('answers a stranger the placeholder for an unregistered referring hostname, without asking the upstream', async () => {
    const before = asked.length;
    const res = await sourceIcon('stranger-source.example');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(PLACEHOLDER_ICON);
    expect(asked.length).toBe(before);
  });

  it('refuses a name longer than 256 characters', async () => {
    const res = await sourceIcon('x'.repeat(257));
    expect(res.status).toBe(400);
  });
});

describe('GET /api/favicon/:domain degrades to the placeholder', () => {
  const expectPlaceholder = (res: Awaited<ReturnType<typeof icon>>) => {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('cache-control')).toBe(DAY);
    expect(res.headers.get('content-security-policy')).toBe(SVG_CSP);
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(res.body).toEqual(PLACEHOLDER_ICON);
  };

  it('when the upstream is slower than the timeout', async () => {
    const started = Date.now();
    expectPlaceholder(await icon('slow.example'));
    expect(Date.now() - started).toBeLessThan(TEST_TIMEOUT_MS + 600);
  });

  it('when the upstream redirects (not followed)', async () => {
    const before = count('/icon.example.ico');
    expectPlaceholder(await icon('redirect.example'));
    expect(count('/icon.example.ico')).toBe(before);
  });

  it('when the upstream answer is huge', async () => {
    expectPlaceholder(await icon('huge.example'));
  });

  it('when the upstream answer is not an image', async () => {
    expectPlaceholder(await icon('html.example'));
  });

  it('when the upstream has no icon (404) or fails (500)', async () => {
    expectPlaceholder(await icon('missing.example'));
    expectPlaceholder(await icon('flaky.example'));
  });

  it('and keeps the placeholder for the day instead of asking again', async () => {
    expectPlaceholder(await icon('html.example'));
    expect(count('/html.example.ico')).toBe(1);
  });

  it('when the upstream is down', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as { port: number }).port;
    closed.close();
    await once(closed, 'close');
    const runtime = t.node.runtime;
    await replaceFaviconService({ ...runtime, config: { ...runtime.config, faviconUpstream: `http://127.0.0.1:${port}/` } } as Runtime);
    try {
      expectPlaceholder(await icon('down.example'));
    } finally {
      await replaceFaviconService(runtime);
    }
  });

  it('when the upstream address is refused (private, not allowed)', async () => {
    const runtime = t.node.runtime;
    await replaceFaviconService({ ...runtime, config: { ...runtime.config, faviconAllowPrivateUpstream: false } } as Runtime);
    try {
      expectPlaceholder(await icon('refused.example'));
      expect(count('/refused.example.ico')).toBe(0);
    } finally {
      await replaceFaviconService(runtime);
    }
  });
});

describe('one upstream request per domain and day', () => {
  it('shares one upstream request among concurrent requests', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => icon('crowd.example')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    expect(answers.every((a) => a.body.equals(ICO))).toBe(true);
    expect(count('/crowd.example.ico')).toBe(1);
  });

  it('keeps results on disk, so a restarted service does not ask again', async () => {
    expect((await icon('restart.example')).body).toEqual(PNG);
    expect((await icon('html.example')).headers.get('content-type')).toBe('image/svg+xml');
    expect(readdirSync(join(t.dataDir, 'favicons')).filter((f) => f.endsWith('.icon')).length).toBeGreaterThanOrEqual(2);
    await replaceFaviconService(t.node.runtime);
    const after = await icon('restart.example');
    expect({ status: after.status, type: after.headers.get('content-type') }).toEqual({ status: 200, type: 'image/png' });
    expect(after.body).toEqual(PNG);
    expect((await icon('html.example')).body).toEqual(PLACEHOLDER_ICON);
    expect(count('/restart.example.ico')).toBe(1);
    expect(count('/html.example.ico')).toBe(1);
  });
});

describe('GET /api/favicon/:domain for callers who are not signed in', () => {
  const cacheFile = (domain: string) => join(t.dataDir, 'favicons', `${createHash('sha256').update(domain).digest('hex')}.icon`);

  it('answers the placeholder for a domain no site is registered under, without a fetch or a cache file', async () => {
    const before = asked.length;
    const res = await icon('unregistered.example', {}, false);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(PLACEHOLDER_ICON);
    expect(asked.length).toBe(before);
    expect(existsSync(cacheFile('unregistered.example'))).toBe(false);
  });

  it("relays a registered site's icon, for its domain and for its further hostnames", async () => {
    const site = await icon('example.com', {}, false);
    expect({ status: site.status, type: site.headers.get('content-type') }).toEqual({ status: 200, type: 'image/x-icon' });
    const hostname = await icon('shop.example.net', {}, false);
    expect({ status: hostname.status, type: hostname.headers.get('content-type') }).toEqual({ status: 200, type: 'image/png' });
    expect(count('/example.com.ico')).toBe(1);
    expect(count('/shop.example.net.ico')).toBe(1);
    expect(existsSync(cacheFile('example.com'))).toBe(true);
  });
});

describe('the disk cache is bounded', () => {
  it('keeps at most its number of entries, deleting the least recently used', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plumb-favicons-'));
    const runtime = t.node.runtime;
    const bounded = { ...runtime, config: { ...runtime.config, dataDir } } as Runtime;
    const files = () => readdirSync(join(dataDir, 'favicons')).filter((f) => f.endsWith('.icon'));
    const fileOf = (domain: string) => `${createHash('sha256').update(domain).digest('hex')}.icon`;
    try {
      await replaceFaviconService(bounded, { maxDiskEntries: 2 });
      await icon('lru-a.example');
      await icon('lru-b.example');
      await icon('lru-a.example'); // a is now used more recently than b
      await icon('lru-c.example');
      expect(files().sort()).toEqual([fileOf('lru-a.example'), fileOf('lru-c.example')].sort());
      // A fresh service reads what the disk kept: a again without asking, b evicted so asked anew.
      await replaceFaviconService(bounded, { maxDiskEntries: 2 });
      await icon('lru-a.example');
      await icon('lru-b.example');
      expect([count('/lru-a.example.ico'), count('/lru-b.example.ico'), count('/lru-c.example.ico')]).toEqual([1, 2, 1]);
      expect(files()).toHaveLength(2);
    } finally {
      await replaceFaviconService(runtime);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('hostile domains', () => {
  /** Sends the path as written: fetch() would resolve "..", which is the point of the test. */
  const raw = (path: string) =>
    new Promise<{ status: number; body: { code?: string; message?: string; fields?: { field: string }[] } }>((resolve, reject) => {
      const req = httpRequest(`${t.url}${path}`, { method: 'GET' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.path = path;
      req.on('error', reject);
      req.end();
    });

  it.each([
    ['an IPv4 literal', '127.0.0.1'],
    ['a shortened IPv4 literal', '127.1'],
    ['an IPv6 literal', encodeURIComponent('[::1]')],
    ['a bare IPv6 literal', encodeURIComponent('::1')],
    ['dot-dot', '%2E%2E'],
    ['an empty label', 'a..com'],
    ['userinfo', 'a@b.com'],
    ['a port', 'a.com:80'],
    ['more than 253 characters', `${'abcdefghi.'.repeat(25)}example.com`],
    ['localhost', 'localhost'],
    ['a path smuggled in', encodeURIComponent('example.com/../admin')],
  ])('refuses %s with 400', async (_what, domain) => {
    const before = asked.length;
    const res = await raw(`/api/favicon/${domain}`);
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual([expect.objectContaining({ field: 'domain' })]);
    expect(asked.length).toBe(before);
  });

  it('refuses a literal ".." path segment', async () => {
    const res = await raw('/api/favicon/..');
    expect(res.status).toBe(400);
  });
});
