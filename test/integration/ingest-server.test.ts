// Server-side ingest and AI-fetch forwarding through a real node: API-client tokens and scopes,
// timestamps, per-item batch results, and the AI agent catalog.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

let t: TestNode;
let ingestToken: string;
let statsOnlyToken: string;
let otherSiteToken: string;
let viewerToken: string;
let aiToken: string;

const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

function post(path: string, body: unknown, token?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  return request(`${t.url}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

const pageview = (path: string, extra: Record<string, unknown> = {}) => ({
  url: `https://example.com${path}`,
  timestamp: minutesFromNow(0),
  visitor_ip: '193.0.6.139',
  user_agent: FIREFOX_LINUX,
  ...extra,
});

/**
 * Sends one valid pageview and waits until it is stored. Ingest stores in the order it accepts, so
 * once this marker is visible, anything accepted before it would be too: an absence checked after
 * this cannot pass merely because the writer is slow.
 */
async function storedThrough(marker: string) {
  expect((await post('/api/ingest/server/pageview', pageview(marker), ingestToken)).status).toBe(202);
  await t.rows('hits', 1, 'path = {marker:String}', { marker });
}

beforeAll(async () => {
  t = await startTestNode();
  ingestToken = await t.token(['ingest:write']);
  statsOnlyToken = await t.token(['stats:read']);
  otherSiteToken = await t.token(['ingest:write'], [{ siteId: t.otherSite.id, role: 'editor' }]);
  viewerToken = await t.token(['ingest:write'], [{ siteId: t.site.id, role: 'viewer' }]);
  aiToken = await t.token(['ai-fetch:write']);
});

afterAll(() => t.stop());

describe('POST /api/ingest/server/pageview', () => {
  it('stores the pageview with the given time and the visitor country, without an Origin', async () => {
    const at = '2026-01-15T09:30:00.250Z';
    const res = await post('/api/ingest/server/pageview', pageview('/server-page', { timestamp: at, referrer: 'https://news.ycombinator.com/' }), ingestToken);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'accepted' });
    const [hit] = await t.rows<Record<string, unknown>>('hits', 1, "path = '/server-page'");
    expect(hit).toMatchObject({ ts: '2026-01-15 09:30:00.250', source: 'server', browser: 'Firefox', os: 'Linux', country: 'NL', referrer: 'news.ycombinator.com' });
  });

  it('groups hits by the caller’s session_id', async () => {
    await post('/api/ingest/server/pageview', pageview('/s1', { session_id: 'abc', visitor_ip: '8.8.4.4' }), ingestToken);
    await post('/api/ingest/server/pageview', pageview('/s2', { session_id: 'abc', visitor_ip: '8.8.4.5' }), ingestToken);
    const hits = await t.rows<{ session_id: string; is_entry: number }>('hits', 2, "path IN ('/s1', '/s2')");
    expect(hits[0].session_id).toBe(hits[1].session_id);
    expect(hits.map((h) => h.is_entry)).toEqual([1, 0]);
  });

  it.each([
    ['no token', undefined, 401, 'unauthorized'],
    ['an unknown token', 'plumb_not-a-real-token', 401, 'unauthorized'],
    ['a token without ingest:write', 'stats', 403, 'forbidden'],
    ['a token for another site', 'other', 403, 'forbidden'],
    ['a viewer token', 'viewer', 403, 'forbidden'],
  ])('refuses %s', async (_name, which, status, code) => {
    const token = { stats: statsOnlyToken, other: otherSiteToken, viewer: viewerToken }[which as string] ?? which;
    const res = await post('/api/ingest/server/pageview', pageview('/refused-token'), token);
    expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  });

  it.each([
    ['a timestamp 10 minutes ahead', { timestamp: minutesFromNow(10) }, 'timestamp is more than 5 minutes in the future'],
    ['a timestamp that is not RFC 3339', { timestamp: '21/11/2026 10:00:00 +0000' }, 'timestamp must be an RFC 3339 date-time'],
    ['a relative url', { url: '/relative' }, 'url must be an absolute http(s) URL'],
  ])('refuses %s', async (_name, extra, message) => {
    const res = await post('/api/ingest/server/pageview', pageview('/refused-field', extra), ingestToken);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(message);
  });

  it('refuses missing fields and wrong types with the failing fields named', async () => {
    const res = await post('/api/ingest/server/pageview', { url: 'https://example.com/', timestamp: 5 }, ingestToken);
    expect(res.status).toBe(400);
    expect((res.body.fields as { field: string }[]).map((f) => f.field).sort()).toEqual(['timestamp', 'user_agent', 'visitor_ip']);
  });

  it('accepts a timestamp just inside the 5-minute tolerance', async () => {
    expect((await post('/api/ingest/server/pageview', pageview('/near-future', { timestamp: minutesFromNow(4) }), ingestToken)).status).toBe(202);
  });

  it('stored none of the refused requests', async () => {
    await storedThrough('/after-refused-pageviews');
    expect(await t.rowsNow('hits', "path IN ('/refused-token', '/refused-field', '/relative')")).toEqual([]);
  });
});

describe('POST /api/ingest/server/event', () => {
  it('stores the event with its properties', async () => {
    const res = await post('/api/ingest/server/event', { ...pageview('/checkout'), name: 'Purchase', properties: { plan: 'team', amount: 49 } }, ingestToken);
    expect(res.status).toBe(202);
    const [event] = await t.rows<{ name: string; props: Record<string, string>; source: string }>('events', 1, "name = 'Purchase'");
    expect(event).toMatchObject({ name: 'Purchase', props: { plan: 'team', amount: '49' }, source: 'server' });
  });
});

describe('POST /api/ingest/server/batch', () => {
  it('judges each item and stores only the accepted ones', async () => {
    const res = await post(
      '/api/ingest/server/batch',
      {
        items: [
          { type: 'pageview', ...pageview('/batch-1') },
          { type: 'event', ...pageview('/batch-2'), name: 'Download' },
          { type: 'pageview', ...pageview('/batch-3', { timestamp: minutesFromNow(60) }) },
          { type: 'pageview', ...pageview('/batch-4', { url: 'https://other.example/batch-4' }) },
          { type: 'event', ...pageview('/batch-5') },
          { type: 'pageview', ...pageview('/batch-6', { user_agent: 'curl/8.4.0' }) },
        ],
      },
      ingestToken,
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 2, filtered: 1, rejected: 3 });
    expect((res.body.results as { status: string; code?: string }[]).map((r) => [r.status, r.code])).toEqual([
      ['accepted', undefined],
      ['accepted', undefined],
      ['rejected', 'validation_failed'],
      ['rejected', 'forbidden'],
      ['rejected', 'validation_failed'],
      ['filtered', undefined],
    ]);
    await t.rows('events', 1, "path = '/batch-2'");
    await storedThrough('/after-batch');
    expect(await t.rowsNow('hits', "path = '/batch-1'")).toHaveLength(1);
    expect(await t.rowsNow('hits', "path IN ('/batch-3', '/batch-4', '/batch-6')")).toEqual([]);
  });

  it('refuses the whole batch for a token without ingest:write', async () => {
    const res = await post('/api/ingest/server/batch', { items: [{ type: 'pageview', ...pageview('/batch-no-scope') }] }, statsOnlyToken);
    expect([res.status, res.body.message]).toEqual([403, 'This token lacks the ingest:write scope']);
  });

  it('refuses more than 1,000 items as a whole', async () => {
    const items = Array.from({ length: 1001 }, (_, i) => ({ type: 'pageview', ...pageview(`/too-many-${i}`) }));
    const res = await post('/api/ingest/server/batch', { items }, ingestToken);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

describe('POST /api/sites/:id/ingest/ai-fetch', () => {
  const fetchOf = (extra: Record<string, unknown> = {}) => ({ path: '/docs/guide', status_code: 200, content_type: 'text/html; charset=utf-8', response_time_ms: 35, bytes: 18230, user_agent: GPTBOT, ...extra });

  it('stores a fetch with the agent, family, category and resource type', async () => {
    const res = await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf(), aiToken);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 1 });
    const [row] = await t.rows<Record<string, unknown>>('ai_fetches', 1);
    expect(row).toMatchObject({
      path: '/docs/guide',
      status_code: 200,
      bytes: '18230',
      assistant_name: 'GPTBot',
      assistant_family: 'OpenAI',
      assistant_category: 'training crawler',
      resource_type: 'html',
    });
  });

  it('accepts a batch of fetches', async () => {
    const res = await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, { items: [fetchOf({ path: '/a.pdf', content_type: 'application/pdf' }), fetchOf({ path: '/b.png', content_type: 'image/png' })] }, aiToken);
    expect(res.body).toEqual({ accepted: 2 });
    const rows = await t.rows<{ resource_type: string }>('ai_fetches', 2, "path IN ('/a.pdf', '/b.png')");
    expect(rows.map((r) => r.resource_type).sort()).toEqual(['document', 'image']);
  });

  it('refuses an unknown agent, and a batch containing one, storing nothing', async () => {
    const single = await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf({ path: '/unknown', user_agent: FIREFOX_LINUX }), aiToken);
    expect(single.status).toBe(400);
    expect(single.body.fields).toEqual([{ field: 'user_agent', message: 'user_agent is not a known AI agent' }]);
    const batch = await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, { items: [fetchOf({ path: '/unknown' }), fetchOf({ path: '/unknown', user_agent: 'curl/8' })] }, aiToken);
    expect(batch.status).toBe(400);
    // A fetch accepted after the refused ones: once it is stored, they would be too.
    expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf({ path: '/after-unknown' }), aiToken)).status).toBe(202);
    await t.rows('ai_fetches', 1, "path = '/after-unknown'");
    expect(await t.rowsNow('ai_fetches', "path = '/unknown'")).toEqual([]);
  });

  it('needs the ai-fetch:write scope for that very site (another site is not found, as on every site route)', async () => {
    expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf(), ingestToken)).status).toBe(403);
    expect((await post(`/api/sites/${t.otherSite.id}/ingest/ai-fetch`, fetchOf(), aiToken)).status).toBe(404);
    expect((await post('/api/sites/00000000-0000-4000-8000-000000000000/ingest/ai-fetch', fetchOf(), aiToken)).status).toBe(404);
    expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf())).status).toBe(401);
  });

  it('refuses a fetch without status_code, naming the field', async () => {
    const res = await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf({ status_code: undefined }), aiToken);
    expect(res.status).toBe(400);
    expect((res.body.fields as { field: string }[]).map((f) => f.field)).toEqual(['status_code']);
  });
});
