// The AI crawler reports (GET /api/sites/:id/ai-fetches/summary, /timeseries, /pages) on a real
// node: fetches sent through the AI-fetch ingest route and AI-referred pageviews through the
// server ingest, read back as exact figures; who may read them; which ranges and intervals are refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const PERPLEXITYBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)';
const CHATGPT_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const CHATGPT = 'https://chatgpt.com/';
const PERPLEXITY = 'https://www.perplexity.ai/search';

/** Two whole UTC days, the site's zone. */
const range = { from: '2026-03-10', to: '2026-03-11' };

let t: TestNode;
let tokyo: Site;
let viewer: Person;
let stranger: Person;
let readToken: string;
let ingestOnlyToken: string;

const post = (path: string, token: string, body: unknown) =>
  fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function read(path: string, query: Record<string, string> = range, who: Person = viewer) {
  const res = await as(t, who, 'GET', `${path}?${new URLSearchParams(query)}`);
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  t = await startTestNode();
  const db = t.node.runtime.metadata();
  viewer = await person(t);
  stranger = await person(t);
  await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [t.site.id, viewer.id]);
  tokyo = await createSite(db, { teamId: t.team.id, domain: 'tokyo.example', timezone: 'Asia/Tokyo' });
  readToken = await t.token(['stats:read']);
  ingestOnlyToken = await t.token(['ingest:write']);

  const crawler = await t.token(['ai-fetch:write'], [
    { siteId: t.site.id, role: 'editor' },
    { siteId: tokyo.id, role: 'editor' },
  ]);
  const html = (path: string, ua: string, timestamp: string, status_code = 200, bytes = 1000) => ({ path, status_code, bytes, user_agent: ua, content_type: 'text/html', timestamp });
  const fetches = [
    html('/docs', GPTBOT, '2026-03-10T09:15:00Z'),
    html('/docs', GPTBOT, '2026-03-10T09:45:00Z'),
    html('/gone', CLAUDEBOT, '2026-03-10T10:05:00Z', 404, 50),
    html('/pricing', PERPLEXITYBOT, '2026-03-11T08:00:00Z', 200, 500),
    html('/docs', CHATGPT_USER, '2026-03-11T08:30:00Z', 200, 800),
    { path: '/logo.png', status_code: 200, bytes: 300, user_agent: GPTBOT, content_type: 'image/png', timestamp: '2026-03-11T12:00:00Z' },
    // The day after the range.
    html('/docs', GPTBOT, '2026-03-12T01:00:00Z'),
  ];
  expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, crawler, { items: fetches })).status).toBe(202);
  // 23:30 on 10 March and 00:30 on 11 March in Tokyo, both on 10 March in UTC.
  const tokyoFetches = [html('/', GPTBOT, '2026-03-10T14:30:00Z'), html('/', GPTBOT, '2026-03-10T15:30:00Z')];
  expect((await post(`/api/sites/${tokyo.id}/ingest/ai-fetch`, crawler, { items: tokyoFetches })).status).toBe(202);

  const pageview = (ip: string, path: string, timestamp: string, referrer?: string) => ({
    type: 'pageview',
    url: `https://example.com${path}`,
    timestamp,
    visitor_ip: ip,
    user_agent: FIREFOX,
    ...(referrer ? { referrer } : {}),
  });
  const items = [
    pageview('192.0.2.11', '/docs', '2026-03-10T11:00:00Z', CHATGPT),
    pageview('192.0.2.12', '/docs', '2026-03-11T09:00:00Z', PERPLEXITY),
    pageview('192.0.2.13', '/blog/ai', '2026-03-11T10:00:00Z', CHATGPT),
    pageview('192.0.2.13', '/docs', '2026-03-11T10:01:00Z'),
    pageview('192.0.2.14', '/pricing', '2026-03-10T12:00:00Z', PERPLEXITY),
    pageview('192.0.2.15', '/gone', '2026-03-10T13:00:00Z', 'https://www.google.com/'),
    pageview('192.0.2.16', '/about', '2026-03-11T11:00:00Z', CHATGPT),
    pageview('192.0.2.17', '/blog/ai', '2026-03-10T15:00:00Z', CHATGPT),
    // The day after the range.
    pageview('192.0.2.18', '/about', '2026-03-12T02:00:00Z', CHATGPT),
  ];
  expect((await post('/api/ingest/server/batch', await t.token(['ingest:write']), { items })).status).toBe(202);
  await t.rows('ai_fetches', 9);
  await t.rows('hits', 9);
  let visits = 0;
  await waitFor(
    async () => {
      visits = ((await read(`/api/sites/${t.site.id}/stats/kpis`, { from: '2026-03-10', to: '2026-03-12' })).kpis as { visits: number }).visits;
      return visits === 8;
    },
    10_000,
    () => `expected 8 visits, found ${visits}`,
  );
}, 90_000);

afterAll(async () => {
  await t?.stop();
});

describe('GET /api/sites/:id/ai-fetches/summary', () => {
  it('gives the totals, assistants and top paths of the range, as the MCP tool does', async () => {
    const summary = await read(`/api/sites/${t.site.id}/ai-fetches/summary`);
    expect(summary.range).toEqual({ from: '2026-03-10T00:00:00.000Z', to: '2026-03-12T00:00:00.000Z', timezone: 'UTC' });
    expect(summary.totals).toEqual({ fetches: 6, errors: 1, pages: 4, bytes: 3650, assistants: 4 });
    expect(summary.assistants).toEqual([
      { assistant_name: 'GPTBot', assistant_family: 'OpenAI', assistant_category: 'training crawler', fetches: 3, errors: 0, pages: 2, last_fetch_at: '2026-03-11T12:00:00.000Z' },
      { assistant_name: 'ChatGPT-User', assistant_family: 'OpenAI', assistant_category: 'assistant', fetches: 1, errors: 0, pages: 1, last_fetch_at: '2026-03-11T08:30:00.000Z' },
      { assistant_name: 'ClaudeBot', assistant_family: 'Anthropic', assistant_category: 'training crawler', fetches: 1, errors: 1, pages: 1, last_fetch_at: '2026-03-10T10:05:00.000Z' },
      { assistant_name: 'PerplexityBot', assistant_family: 'Perplexity', assistant_category: 'search indexer', fetches: 1, errors: 0, pages: 1, last_fetch_at: '2026-03-11T08:00:00.000Z' },
    ]);
    expect(summary.top_paths).toEqual([
      { path: '/docs', fetches: 3, assistants: 2 },
      { path: '/gone', fetches: 1, assistants: 1 },
      { path: '/logo.png', fetches: 1, assistants: 1 },
      { path: '/pricing', fetches: 1, assistants: 1 },
    ]);
  });

  it('breaks the fetches down by family, category, resource type and status class, most first', async () => {
    const { breakdowns } = await read(`/api/sites/${t.site.id}/ai-fetches/summary`);
    expect(breakdowns).toEqual({
      assistant_family: [
        { value: 'OpenAI', fetches: 4, assistants: 2 },
        { value: 'Anthropic', fetches: 1, assistants: 1 },
        { value: 'Perplexity', fetches: 1, assistants: 1 },
      ],
      assistant_category: [
        { value: 'training crawler', fetches: 4, assistants: 2 },
        { value: 'assistant', fetches: 1, assistants: 1 },
        { value: 'search indexer', fetches: 1, assistants: 1 },
      ],
      resource_type: [
        { value: 'html', fetches: 5, assistants: 4 },
        { value: 'image', fetches: 1, assistants: 1 },
      ],
      status_class: [
        { value: '2xx', fetches: 5, assistants: 3 },
        { value: '4xx', fetches: 1, assistants: 1 },
      ],
    });
  });
});

describe('GET /api/sites/:id/ai-fetches/timeseries', () => {
  it('counts fetches per day by family, every family in every bucket', async () => {
    expect(await read(`/api/sites/${t.site.id}/ai-fetches/timeseries`, { ...range, interval: 'day' })).toEqual({
      interval: 'day',
      families: ['OpenAI', 'Anthropic', 'Perplexity'],
      rows: [
        {
          bucket: '2026-03-10T00:00:00.000Z',
          fetches: 3,
          families: [
            { assistant_family: 'OpenAI', fetches: 2 },
            { assistant_family: 'Anthropic', fetches: 1 },
            { assistant_family: 'Perplexity', fetches: 0 },
          ],
        },
        {
          bucket: '2026-03-11T00:00:00.000Z',
          fetches: 3,
          families: [
            { assistant_family: 'OpenAI', fetches: 2 },
            { assistant_family: 'Anthropic', fetches: 0 },
            { assistant_family: 'Perplexity', fetches: 1 },
          ],
        },
      ],
    });
  });

  it('gives every hour of the range, zeros where nothing was fetched', async () => {
    const series = await read(`/api/sites/${t.site.id}/ai-fetches/timeseries`, { from: '2026-03-10', to: '2026-03-10', interval: 'hour' });
    const rows = series.rows as { bucket: string; fetches: number }[];
    expect(rows).toHaveLength(24);
    expect(rows.filter((r) => r.fetches > 0).map((r) => [r.bucket, r.fetches])).toEqual([
      ['2026-03-10T09:00:00.000Z', 2],
      ['2026-03-10T10:00:00.000Z', 1],
    ]);
  });

  it('counts days in the site’s time zone', async () => {
    const series = await read(`/api/sites/${tokyo.id}/ai-fetches/timeseries`, range, await viewerOf(tokyo));
    expect((series.rows as { bucket: string; fetches: number }[]).map((r) => [r.bucket, r.fetches])).toEqual([
      ['2026-03-09T15:00:00.000Z', 1],
      ['2026-03-10T15:00:00.000Z', 1],
    ]);
  });
});

describe('GET /api/sites/:id/ai-fetches/pages', () => {
  it('sets the paths AI agents fetched beside the AI-referred visits that landed on them, and lists the landings no agent fetched', async () => {
    expect(await read(`/api/sites/${t.site.id}/ai-fetches/pages`)).toEqual({
      range: { from: '2026-03-10T00:00:00.000Z', to: '2026-03-12T00:00:00.000Z', timezone: 'UTC' },
      fetched: [
        { path: '/docs', fetches: 3, assistants: 2, ai_referred_visits: 2 },
        { path: '/gone', fetches: 1, assistants: 1, ai_referred_visits: 0 },
        { path: '/logo.png', fetches: 1, assistants: 1, ai_referred_visits: 0 },
        { path: '/pricing', fetches: 1, assistants: 1, ai_referred_visits: 1 },
      ],
      unfetched_landings: [
        { path: '/blog/ai', ai_referred_visits: 2 },
        { path: '/about', ai_referred_visits: 1 },
      ],
    });
  });

  it('answers empty lists for a range without fetches or visits', async () => {
    expect(await read(`/api/sites/${t.site.id}/ai-fetches/pages`, { from: '2025-01-01', to: '2025-01-31' })).toMatchObject({ fetched: [], unfetched_landings: [] });
  });
});

describe('GET /api/sites/:id/ai-fetches/*: who may read, what is refused', () => {
  const paths = ['summary', 'timeseries', 'pages'];
  const get = (path: string, headers: Record<string, string>, query: Record<string, string> = range) =>
    fetch(`${t.url}/api/sites/${t.site.id}/ai-fetches/${path}?${new URLSearchParams(query)}`, { headers });

  it('answers a viewer and a stats:read token alike', async () => {
    for (const path of paths) {
      const cookie = await read(`/api/sites/${t.site.id}/ai-fetches/${path}`);
      const bearer = await get(path, { Authorization: `Bearer ${readToken}` });
      expect({ path, status: bearer.status }).toEqual({ path, status: 200 });
      expect(await bearer.json()).toEqual(cookie);
    }
  });

  it('no credentials → 401, a non-member → 404, a token without stats:read → 403', async () => {
    for (const path of paths) {
      const anonymous = await get(path, {});
      const outsider = await get(path, { Cookie: stranger.cookie });
      const noScope = await get(path, { Authorization: `Bearer ${ingestOnlyToken}` });
      expect({ path, statuses: [anonymous.status, outsider.status, noScope.status] }).toEqual({ path, statuses: [401, 404, 403] });
    }
  });

  it('refuses a range longer than 366 days', async () => {
    for (const path of paths) {
      const res = await as(t, viewer, 'GET', `/api/sites/${t.site.id}/ai-fetches/${path}?from=2025-01-01&to=2026-03-11`);
      expect({ path, status: res.status, message: res.body.message }).toEqual({ path, status: 400, message: expect.stringContaining('to may be at most 366 days after from') });
    }
    await read(`/api/sites/${t.site.id}/ai-fetches/summary`, { from: '2025-03-11', to: '2026-03-11' });
  });

  it('refuses an interval other than hour or day, and an hourly series too long for a chart', async () => {
    const week = await as(t, viewer, 'GET', `/api/sites/${t.site.id}/ai-fetches/timeseries?from=2026-03-01&to=2026-03-11&interval=week`);
    expect(week.status).toBe(400);
    const hourly = await as(t, viewer, 'GET', `/api/sites/${t.site.id}/ai-fetches/timeseries?from=2025-06-01&to=2026-03-11&interval=hour`);
    expect(hourly.status).toBe(400);
    expect(hourly.body.message).toMatch(/interval hour would give more than 5000 buckets/);
  });
});

/** A new person who may view the site. */
async function viewerOf(site: Site): Promise<Person> {
  const someone = await person(t);
  await t.node.runtime.metadata().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [site.id, someone.id]);
  return someone;
}
