// The three public tracker routes through a real node: what is stored for a good request, and
// that every bad one gets the right status and stores nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

let t: TestNode;
let ipCounter = 0;
/** Each test speaks from its own public IP (the node trusts one proxy hop), so rate limits and visitors stay apart. */
const nextIp = () => `8.8.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`;

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return request(`${t.url}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'text/plain',
      Origin: 'https://example.com',
      'User-Agent': CHROME_WINDOWS,
      'X-Forwarded-For': headers['X-Forwarded-For'] ?? nextIp(),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/**
 * Sends one valid pageview and waits until it is stored. Ingest stores in the order it accepts, so
 * once this marker is visible, anything accepted before it would be too: an absence checked after
 * this cannot pass merely because the writer is slow.
 */
async function storedThrough(marker: string) {
  expect((await post('/ingest', { url: `https://example.com${marker}` })).status).toBe(202);
  await t.rows('hits', 1, 'path = {marker:String}', { marker });
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_TRUSTED_PROXY_HOPS: '1', PLUMB_INGEST_RATE_PER_SECOND: '5', PLUMB_INGEST_BURST: '5' });
});

afterAll(() => t.stop());

describe('POST /ingest', () => {
  it('stores a pageview with its path, UTM, referrer source, device and country, and answers 202 with no body', async () => {
    const res = await post(
      '/ingest',
      { url: 'https://example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=launch&secret=1#top', referrer: 'https://www.google.com/search?q=x', width: 1440 },
      { 'X-Forwarded-For': '8.8.8.8' },
    );
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const [hit] = await t.rows<Record<string, unknown>>('hits', 1, 'path = {p:String}', { p: '/pricing' });
    expect(hit).toMatchObject({
      site_id: t.site.id,
      hostname: 'example.com',
      path: '/pricing',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'launch',
      referrer: 'google.com',
      referrer_source: 'Google',
      channel: 'email',
      browser: 'Chrome',
      os: 'Windows',
      device: 'desktop',
      country: 'US',
      screen_width: 1440,
      is_entry: 1,
      source: 'tracker',
    });
    expect(JSON.stringify(hit)).not.toContain('8.8.8.8');
  });

  it('keeps one visitor and one session across pageviews, with only the first as entry', async () => {
    const ip = '9.9.9.9';
    await post('/ingest', { url: 'https://example.com/visit-a' }, { 'X-Forwarded-For': ip, 'User-Agent': SAFARI_IPHONE });
    await post('/ingest', { url: 'https://example.com/visit-b' }, { 'X-Forwarded-For': ip, 'User-Agent': SAFARI_IPHONE });
    const hits = await t.rows<{ path: string; visitor_id: string; session_id: string; is_entry: number; device: string }>('hits', 2, "path LIKE '/visit-%'");
    expect(hits.map((h) => [h.path, h.is_entry, h.device])).toEqual([
      ['/visit-a', 1, 'mobile'],
      ['/visit-b', 0, 'mobile'],
    ]);
    expect(hits[0].visitor_id).toBe(hits[1].visitor_id);
    expect(hits[0].session_id).toBe(hits[1].session_id);
  });

  it('resolves www. and the extra hostnames of a site', async () => {
    expect((await post('/ingest', { url: 'https://www.example.com/from-www' }, { Origin: 'https://WWW.Example.com' })).status).toBe(202);
    expect((await post('/ingest', { url: 'https://shop.example.net/from-shop' }, { Origin: 'https://shop.example.net' })).status).toBe(202);
    const hits = await t.rows<{ site_id: string }>('hits', 2, "path IN ('/from-www', '/from-shop')");
    expect(hits.map((h) => h.site_id)).toEqual([t.site.id, t.site.id]);
  });

  it('accepts application/json as well as text/plain', async () => {
    const res = await post('/ingest', { url: 'https://example.com/json' }, { 'Content-Type': 'application/json' });
    expect(res.status).toBe(202);
  });

  it('answers the CORS preflight with what a browser may send, and the hit itself with the origin alone', async () => {
    const res = await request(`${t.url}/ingest`, { method: 'OPTIONS', headers: { Origin: 'https://example.com', 'Access-Control-Request-Method': 'POST' } });
    expect(res.status).toBe(204);
    const cors = (answer: { headers: Headers }) =>
      ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age'].map((name) => answer.headers.get(name));
    expect(cors(res)).toEqual(['*', 'POST, OPTIONS', 'Content-Type', '86400']);
    const hit = await post('/ingest', { url: 'https://example.com/cors' }, { Origin: 'https://example.com' });
    expect([hit.status, ...cors(hit)]).toEqual([202, '*', null, null, null]);
  });

  it('drops bots with a 202 and stores nothing', async () => {
    const res = await post('/ingest', { url: 'https://example.com/bot-visit' }, { 'User-Agent': GOOGLEBOT });
    expect(res.status).toBe(202);
    await storedThrough('/after-bot-visit');
    expect(await t.rowsNow('hits', "path = '/bot-visit'")).toEqual([]);
  });
});

describe('refusals on the tracker routes', () => {
  it.each([
    ['an unknown Origin', { url: 'https://evil.example/x' }, { Origin: 'https://evil.example' }, 403, 'forbidden'],
    ['no Origin or Referer', { url: 'https://example.com/x' }, { Origin: '' }, 403, 'forbidden'],
    ['a non-http Origin', { url: 'https://example.com/x' }, { Origin: 'null' }, 403, 'forbidden'],
    ['invalid JSON', '{"url": "https://example.com/x",', {}, 400, 'invalid_json'],
    ['a missing url', { referrer: 'https://example.com' }, {}, 400, 'validation_failed'],
    ['a width of the wrong type', { url: 'https://example.com/x', width: 'wide' }, {}, 400, 'validation_failed'],
    ['a url that is not http(s)', { url: 'javascript:alert(1)' }, {}, 400, 'validation_failed'],
    ['a 17 KiB body', { url: `https://example.com/${'a'.repeat(17 * 1024)}` }, {}, 413, 'payload_too_large'],
    ['a form-encoded body', 'url=https://example.com/', { 'Content-Type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
  ])('refuses %s', async (_name, body, headers, status, code) => {
    const res = await post('/ingest', body, headers as Record<string, string>);
    expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  });

  it('refuses reserved and malformed event names and bad properties', async () => {
    expect((await post('/ingest/event', { url: 'https://example.com/', name: '$pageview' })).body.code).toBe('validation_failed');
    expect((await post('/ingest/event', { url: 'https://example.com/', name: '' })).status).toBe(400);
    expect((await post('/ingest/event', { url: 'https://example.com/', name: 'x', props: { nested: { a: 1 } } })).status).toBe(400);
    expect((await post('/ingest/event', { url: 'https://example.com/', name: '$engagement' })).status).toBe(400);
  });

  it('stored none of the refused requests', async () => {
    await storedThrough('/after-refusals');
    expect(await t.rowsNow('hits', "path = '/x'")).toEqual([]);
  });

  it('limits each IP to its bucket with 429 and Retry-After', async () => {
    const ip = '1.1.1.1';
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 14; i++) {
      const res = await post('/ingest', { url: 'https://example.com/limited' }, { 'X-Forwarded-For': ip });
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
    }
    expect(statuses.filter((s) => s === 202).length).toBe(10);
    expect(statuses.slice(10)).toEqual([429, 429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Another IP is unaffected.
    expect((await post('/ingest', { url: 'https://example.com/limited' })).status).toBe(202);
  });
});

describe('POST /ingest/event', () => {
  it('stores a custom event with its properties as strings', async () => {
    const res = await post('/ingest/event', { url: 'https://example.com/signup', name: 'Signup', props: { plan: 'pro', seats: 3, trial: true } });
    expect(res.status).toBe(202);
    const [event] = await t.rows<{ name: string; props: Record<string, string>; path: string; source: string }>('events', 1, "name = 'Signup'");
    expect(event).toMatchObject({ name: 'Signup', path: '/signup', props: { plan: 'pro', seats: '3', trial: 'true' }, source: 'tracker' });
  });

  it('stores engagement time as a $engagement event', async () => {
    await post('/ingest/event', { url: 'https://example.com/read', name: '$engagement', engagement_ms: 4200 });
    const [event] = await t.rows<{ props: Record<string, string> }>('events', 1, "name = '$engagement'");
    expect(event.props).toEqual({ engagement_ms: '4200' });
  });
});

describe('POST /ingest/web-vitals', () => {
  it('stores a metric with its rating', async () => {
    const res = await post('/ingest/web-vitals', { url: 'https://example.com/fast', metric: 'LCP', value: 812.5, rating: 'good' });
    expect(res.status).toBe(202);
    const [vital] = await t.rows<{ metric: string; value: number; rating: string; path: string }>('web_vitals', 1);
    expect(vital).toMatchObject({ metric: 'LCP', value: 812.5, rating: 'good', path: '/fast' });
  });

  it('refuses an unknown metric', async () => {
    expect((await post('/ingest/web-vitals', { url: 'https://example.com/', metric: 'FID', value: 3 })).status).toBe(400);
  });
});
