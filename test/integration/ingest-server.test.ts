// Server-side ingest and AI-fetch forwarding through a real node: API-client tokens and scopes,
// timestamps, per-item batch results, and the AI agent catalog.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from '../support/instance.ts';
import { fingerprintOf } from '../../lib/ingest/idempotency.ts';
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
    expect(res.body).toMatchObject({ accepted: 2, rejected: 0 });
    const rows = await t.rows<{ resource_type: string }>('ai_fetches', 2, "path IN ('/a.pdf', '/b.png')");
    expect(rows.map((r) => r.resource_type).sort()).toEqual(['document', 'image']);
  });

  it('refuses a single fetch by an unknown agent with a 400, storing nothing', async () => {
    const single = await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf({ path: '/unknown', user_agent: FIREFOX_LINUX }), aiToken);
    expect(single.status).toBe(400);
    expect(single.body.fields).toEqual([{ field: 'user_agent', message: 'user_agent is not a known AI agent' }]);
    // A fetch accepted after the refused one: once it is stored, the refused one would be too.
    expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchOf({ path: '/after-unknown' }), aiToken)).status).toBe(202);
    await t.rows('ai_fetches', 1, "path = '/after-unknown'");
    expect(await t.rowsNow('ai_fetches', "path = '/unknown'")).toEqual([]);
  });

  it('stores the good fetches of a batch and names each bad one', async () => {
    const res = await post(
      `/api/sites/${t.site.id}/ingest/ai-fetch`,
      { items: [fetchOf({ path: '/batch-good-1' }), fetchOf({ path: '/batch-curl', user_agent: 'curl/8' }), fetchOf({ path: '/batch-good-2', status_code: 404 })] },
      aiToken,
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      accepted: 2,
      rejected: 1,
      results: [
        { index: 0, status: 'accepted' },
        {
          index: 1,
          status: 'rejected',
          code: 'validation_failed',
          message: 'user_agent is not a known AI agent',
          fields: [{ field: 'user_agent', message: 'user_agent is not a known AI agent' }],
        },
        { index: 2, status: 'accepted' },
      ],
    });
    const rows = await t.rows<{ path: string; status_code: number }>('ai_fetches', 2, "path IN ('/batch-good-1', '/batch-good-2')");
    expect(rows.map((r) => [r.path, r.status_code]).sort()).toEqual([
      ['/batch-good-1', 200],
      ['/batch-good-2', 404],
    ]);
    expect(await t.rowsNow('ai_fetches', "path = '/batch-curl'")).toEqual([]);
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

describe('POST /api/sites/:id/ingest/ai-fetch with an Idempotency-Key', () => {
  const fetchAt = (path: string) => ({ path, status_code: 200, user_agent: GPTBOT });
  function send(body: unknown, key: string) {
    return request(`${t.url}/api/sites/${t.site.id}/ingest/ai-fetch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${aiToken}`, 'Idempotency-Key': key },
      body: JSON.stringify(body),
    });
  }
  /** Waits until a later fetch is stored: anything accepted before it is then stored too. */
  async function storedThroughFetch(marker: string) {
    expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, fetchAt(marker), aiToken)).status).toBe(202);
    await t.rows('ai_fetches', 1, 'path = {marker:String}', { marker });
  }

  it('answers a resend with the first answer, marked as replayed, and stores the batch once', async () => {
    const batch = { items: [fetchAt('/idem-1'), fetchAt('/idem-2'), { ...fetchAt('/idem-bad'), user_agent: 'curl/8' }] };
    const first = await send(batch, 'batch-1:0-300');
    const again = await send(batch, 'batch-1:0-300');
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body).toEqual(first.body);
    expect(again.body).toMatchObject({ accepted: 2, rejected: 1 });
    expect([first.headers.get('idempotent-replayed'), again.headers.get('idempotent-replayed')]).toEqual([null, 'true']);
    await storedThroughFetch('/after-idem');
    expect(await t.rowsNow('ai_fetches', "path IN ('/idem-1', '/idem-2')")).toHaveLength(2);
  });

  it('refuses a key reused for another batch with a 409, storing nothing', async () => {
    const res = await send({ items: [fetchAt('/idem-other-content')] }, 'batch-1:0-300');
    expect([res.status, res.body.code]).toEqual([409, 'conflict']);
    expect(res.body.message).toBe('This Idempotency-Key was used for another request in the last 24 hours');
    await storedThroughFetch('/after-idem-reused');
    expect(await t.rowsNow('ai_fetches', "path = '/idem-other-content'")).toEqual([]);
  });

  it('answers 409 with Retry-After while the first request with the key is unanswered', async () => {
    const body = { items: [fetchAt('/idem-in-progress')] };
    const metadata = t.node.runtime.metadata();
    // A claim as a node makes it before its append: no answer yet.
    await metadata.query('INSERT INTO idempotency_keys (site_id, key, fingerprint) VALUES ($1, $2, $3)', [t.site.id, 'in-progress', fingerprintOf(body.items)]);
    const res = await send(body, 'in-progress');
    expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([409, 'conflict', '2']);
  });

  it('takes over a claim its node abandoned more than a minute ago, and stores the batch', async () => {
    const body = { items: [fetchAt('/idem-abandoned')] };
    await t.node.runtime
      .metadata()
      .query("INSERT INTO idempotency_keys (site_id, key, fingerprint, created_at) VALUES ($1, $2, $3, now() - interval '2 minutes')", [t.site.id, 'abandoned', fingerprintOf(body.items)]);
    const res = await send(body, 'abandoned');
    expect([res.status, res.body]).toEqual([202, { accepted: 1, rejected: 0, results: [{ index: 0, status: 'accepted' }] }]);
    await t.rows('ai_fetches', 1, "path = '/idem-abandoned'");
  });

  it('stores a batch again once its key is older than 24 hours', async () => {
    const body = { items: [fetchAt('/idem-expired')] };
    expect((await send(body, 'expired')).status).toBe(202);
    await t.node.runtime.metadata().query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'expired'");
    const again = await send(body, 'expired');
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([202, null]);
    await t.rows('ai_fetches', 2, "path = '/idem-expired'");
  });

  it.each([
    ['an empty key', ''],
    ['a key with a space', 'two words'],
    ['a key of 201 characters', 'k'.repeat(201)],
  ])('refuses %s with a 400 naming the header', async (_name, key) => {
    const res = await send({ items: [fetchAt('/idem-bad-key')] }, key);
    expect([res.status, res.body.fields]).toEqual([400, [{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 200 visible ASCII characters, once' }]]);
  });
});
