// The MCP server at /mcp on a real node, driven by the official SDK client over Streamable HTTP:
// the tools it lists, figures equal to the REST API's for the same query, and who is refused
// (no token, a cookie, a token without the mcp scope, a site the token's owner cannot view), over
// what (a range beyond 366 days, an unknown dimension, a malformed date), never with a 500.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createFunnel } from '../../lib/funnels/funnels.ts';
import { createGoal } from '../../lib/goals/goals.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const TOOL_NAMES = [
  'get_ai_fetches',
  'get_breakdown',
  'get_event_audience',
  'get_event_breakdown',
  'get_event_properties',
  'get_event_timeseries',
  'get_funnel',
  'get_kpis',
  'get_realtime',
  'get_timeseries',
  'list_event_names',
  'list_funnels',
  'list_goals',
  'list_sites',
];

let t: TestNode;
let viewer: Person;
let mcpToken: string;
let statsOnlyToken: string;
let mcp: Client;
let funnelId: string;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
/** Yesterday and today (UTC, the site's zone): the data lands in it whenever the test runs. */
const range = { from: day(-1), to: day(0) };

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'plumb-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }));
  return client;
}

/** The tool's structured answer; fails the test, quoting the text, when the tool refused. */
async function callTool(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, unknown>;
}

/** The refusal text of a tool call that must fail. */
async function refusal(name: string, args: Record<string, unknown>, client = mcp): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  return (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
}

async function rest(path: string, query: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await as(t, viewer, 'GET', `${path}?${new URLSearchParams({ ...range, ...query })}`);
  expect(res.status).toBe(200);
  return res.body;
}

const post = (path: string, token: string, body: unknown) =>
  fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  // A bucket that holds the whole file's requests and refills slowly, so the last test can empty it.
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '1', PLUMB_API_BURST: '5000' });
  const db = t.node.runtime.metadata();
  viewer = await person(t);
  await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [t.site.id, viewer.id]);
  // The token names the other site too, where its owner has no role: it reaches only the first.
  const grants = [
    { siteId: t.site.id, role: 'viewer' as const },
    { siteId: t.otherSite.id, role: 'viewer' as const },
  ];
  mcpToken = (await createApiClient(db, { name: 'assistant', scopes: ['mcp'], sites: grants, ownerUserId: viewer.id })).token;
  statsOnlyToken = (await createApiClient(db, { name: 'dashboard script', scopes: ['stats:read'], sites: grants, ownerUserId: viewer.id })).token;

  const owner = await person(t, 'owner');
  await createGoal(db, owner, t.site.id, { name: 'Signup', type: 'event', event_name: 'Signup' });
  await createGoal(db, owner, t.site.id, { name: 'Pricing', type: 'path', path_pattern: '/pricing' });
  funnelId = (await createFunnel(db, owner, t.site.id, { name: 'Home to pricing', steps: [{ type: 'path', path_pattern: '/' }, { type: 'path', path_pattern: '/pricing' }] })).id;

  const ingest = await t.token(['ingest:write']);
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const hit = (ip: string, ua: string, path: string, minutesAgo: number, referrer?: string) => ({
    type: 'pageview',
    url: `https://example.com${path}`,
    timestamp: at(minutesAgo),
    visitor_ip: ip,
    user_agent: ua,
    ...(referrer ? { referrer } : {}),
  });
  const signup = (ip: string, ua: string, plan: string, minutesAgo: number) => ({ ...hit(ip, ua, '/pricing', minutesAgo), type: 'event', name: 'Signup', properties: { plan } });
  const items = [
    hit('192.0.2.1', FIREFOX, '/', 4, 'https://www.google.com/'),
    hit('192.0.2.1', FIREFOX, '/pricing', 3),
    signup('192.0.2.1', FIREFOX, 'pro', 3),
    hit('192.0.2.2', CHROME, '/', 3, 'https://news.ycombinator.com/'),
    hit('192.0.2.2', CHROME, '/pricing', 2),
    signup('192.0.2.2', CHROME, 'free', 2),
    hit('192.0.2.3', SAFARI, '/docs', 2),
  ];
  expect((await post('/api/ingest/server/batch', ingest, { items })).status).toBe(202);
  const crawler = await t.token(['ai-fetch:write']);
  const fetches = [
    { path: '/docs', status_code: 200, bytes: 1000, user_agent: GPTBOT, timestamp: at(30) },
    { path: '/docs', status_code: 200, bytes: 1000, user_agent: GPTBOT, timestamp: at(20) },
    { path: '/gone', status_code: 404, bytes: 50, user_agent: CLAUDEBOT, timestamp: at(10) },
  ];
  expect((await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, crawler, { items: fetches })).status).toBe(202);
  await t.rows('hits', 5);
  await t.rows('events', 2, "name = 'Signup'");
  await t.rows('ai_fetches', 3);
  // Visits are written beside the hits; the figures are read once all three are counted.
  let visits = 0;
  await waitFor(
    async () => {
      visits = ((await rest(`/api/sites/${t.site.id}/stats/kpis`)).kpis as { visits: number }).visits;
      return visits === 3;
    },
    10_000,
    () => `expected 3 visits, found ${visits}`,
  );
  mcp = await connect({ Authorization: `Bearer ${mcpToken}` });
}, 90_000);

afterAll(async () => {
  await mcp?.close();
  await t?.stop();
});

describe('POST /mcp: tools/list', () => {
  it('names every tool, each with an input schema, an output schema and read-only hints', async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations).toMatchObject({ readOnlyHint: true });
    }
    const breakdown = tools.find((tool) => tool.name === 'get_breakdown')!;
    expect(breakdown.inputSchema.required).toEqual(['site_id', 'dimension']);
    expect((breakdown.inputSchema.properties as Record<string, { enum?: string[] }>).dimension.enum).toContain('entry_pages');
  });
});

describe('POST /mcp: tools/call, figures as the REST API gives them', () => {
  it('list_sites names the sites the token can read, as GET /api/sites does for its owner', async () => {
    const sites = await callTool('list_sites');
    expect((sites.items as { id: string }[]).map((s) => s.id)).toEqual([t.site.id]);
    expect(sites).toEqual(await rest('/api/sites', { limit: '25' }));
  });

  it('get_kpis equals GET /api/sites/:id/stats/kpis, comparison included', async () => {
    const kpis = await callTool('get_kpis', { site_id: t.site.id, ...range, compare: 'previous_period' });
    expect(kpis.kpis).toMatchObject({ visitors: 3, visits: 3, pageviews: 5 });
    expect(kpis).toEqual(await rest(`/api/sites/${t.site.id}/stats/kpis`, { compare: 'previous_period' }));
  });

  it('get_timeseries equals GET /api/sites/:id/stats/timeseries', async () => {
    const series = await callTool('get_timeseries', { site_id: t.site.id, ...range, interval: 'day' });
    expect((series.timeseries as unknown[]).length).toBe(2);
    expect(series).toEqual(await rest(`/api/sites/${t.site.id}/stats/timeseries`, { interval: 'day' }));
  });

  it('get_breakdown equals GET /api/sites/:id/stats/breakdown, with filters as the REST filter parameter', async () => {
    const pages = await callTool('get_breakdown', {
      site_id: t.site.id,
      ...range,
      dimension: 'pages',
      filters: [{ dimension: 'page', operator: 'is_not', value: '/docs' }],
      limit: 10,
    });
    expect((pages.rows as { value: string; visitors: number }[]).map((r) => [r.value, r.visitors])).toEqual([
      ['/', 2],
      ['/pricing', 2],
    ]);
    expect(pages).toEqual(await rest(`/api/sites/${t.site.id}/stats/breakdown`, { dimension: 'pages', filter: 'page:is_not:/docs', limit: '10' }));
    const sources = await callTool('get_breakdown', { site_id: t.site.id, ...range, dimension: 'sources' });
    expect(sources).toEqual(await rest(`/api/sites/${t.site.id}/stats/breakdown`, { dimension: 'sources' }));
  });

  it('the event tools equal GET /api/sites/:id/events/*', async () => {
    const site = { site_id: t.site.id, ...range };
    const names = await callTool('list_event_names', site);
    expect(names).toEqual({ rows: [{ name: 'Signup', unique_sessions: 2, events: 2 }] });
    expect(names).toEqual(await rest(`/api/sites/${t.site.id}/events/names`));
    const event = { event_name: 'Signup' };
    expect(await callTool('get_event_properties', { ...site, ...event })).toEqual(await rest(`/api/sites/${t.site.id}/events/properties`, event));
    const plans = await callTool('get_event_breakdown', { ...site, ...event, property_key: 'plan' });
    expect(plans).toEqual({
      rows: [
        { value: 'free', unique_sessions: 1, events: 1 },
        { value: 'pro', unique_sessions: 1, events: 1 },
      ],
    });
    expect(plans).toEqual(await rest(`/api/sites/${t.site.id}/events/breakdown`, { ...event, property_key: 'plan' }));
    const pro = { ...event, property_key: 'plan', property_value: 'pro' };
    expect(await callTool('get_event_timeseries', { ...site, ...pro })).toEqual(await rest(`/api/sites/${t.site.id}/events/timeseries`, pro));
    expect(await callTool('get_event_audience', { ...site, ...event })).toEqual(await rest(`/api/sites/${t.site.id}/events/audience`, event));
  });

  it('list_goals equals GET /api/sites/:id/goals/stats', async () => {
    const goals = await callTool('list_goals', { site_id: t.site.id, ...range });
    expect((goals.rows as { name: string; conversions: number }[]).map((g) => [g.name, g.conversions])).toEqual([
      ['Pricing', 2],
      ['Signup', 2],
    ]);
    expect(goals).toEqual(await rest(`/api/sites/${t.site.id}/goals/stats`));
  });

  it('list_funnels and get_funnel equal GET /api/sites/:id/funnels and its stats', async () => {
    expect(await callTool('list_funnels', { site_id: t.site.id })).toEqual(await rest(`/api/sites/${t.site.id}/funnels`));
    const funnel = await callTool('get_funnel', { site_id: t.site.id, funnel_id: funnelId, ...range });
    expect(funnel.funnel).toEqual((await rest(`/api/sites/${t.site.id}/funnels/${funnelId}`)).funnel);
    expect(funnel.stats).toEqual(await rest(`/api/sites/${t.site.id}/funnels/${funnelId}/stats`));
    expect((funnel.stats as { steps: { visitors: number }[] }).steps.map((s) => s.visitors)).toEqual([2, 2]);
  });

  it('get_realtime gives the live visitors, their pages and the latest events', async () => {
    const now = await callTool('get_realtime', { site_id: t.site.id });
    expect(now.live_visitors).toBe(3);
    expect(now.current_pages).toEqual([
      { path: '/pricing', visitors: 2 },
      { path: '/docs', visitors: 1 },
    ]);
    expect((now.recent_events as { name: string }[]).map((e) => e.name)).toEqual(['Signup', 'Signup']);
  });

  it('get_ai_fetches sums the crawler fetches per assistant and path', async () => {
    const fetches = await callTool('get_ai_fetches', { site_id: t.site.id, ...range });
    expect(fetches.totals).toEqual({ fetches: 3, errors: 1, pages: 2, bytes: 2050, assistants: 2 });
    expect((fetches.assistants as Record<string, unknown>[]).map(({ last_fetch_at: _, ...a }) => a)).toEqual([
      { assistant_name: 'GPTBot', assistant_family: 'OpenAI', assistant_category: 'training crawler', fetches: 2, errors: 0, pages: 1 },
      { assistant_name: 'ClaudeBot', assistant_family: 'Anthropic', assistant_category: 'training crawler', fetches: 1, errors: 1, pages: 1 },
    ]);
    expect(fetches.top_paths).toEqual([
      { path: '/docs', fetches: 2, assistants: 1 },
      { path: '/gone', fetches: 1, assistants: 1 },
    ]);
  });

  it('puts a one-line summary and the same figures as JSON in the text content', async () => {
    const result = (await mcp.callTool({ name: 'list_event_names', arguments: { site_id: t.site.id, ...range } })) as CallToolResult;
    const [text] = result.content as { type: 'text'; text: string }[];
    const [summary, json] = text.text.split('\n');
    expect(summary).toBe('1 event name(s).');
    expect(JSON.parse(json)).toEqual(result.structuredContent);
  });
});

describe('POST /mcp: what a tool refuses', () => {
  it('refuses a site the token’s owner cannot view, and one that does not exist, alike', async () => {
    const text = await refusal('get_kpis', { site_id: t.otherSite.id });
    expect(text).toBe(`This token cannot view the site ${t.otherSite.id}: list_sites names the sites it can read`);
    expect(await refusal('get_kpis', { site_id: '00000000-0000-4000-8000-00000000abcd' })).toMatch(/^This token cannot view the site/);
  });

  it('refuses a range longer than 366 days, which the REST API would read', async () => {
    const long = { from: day(-400), to: day(0) };
    expect(await refusal('get_kpis', { site_id: t.site.id, ...long })).toBe('to is 401 days after from; one call reads at most 366 days, so split the range');
    expect(await refusal('get_ai_fetches', { site_id: t.site.id, ...long })).toMatch(/at most 366 days/);
    await callTool('get_kpis', { site_id: t.site.id, from: day(-365), to: day(0) });
  });

  it('refuses an unknown dimension and a malformed date as tool errors naming them', async () => {
    expect(await refusal('get_breakdown', { site_id: t.site.id, dimension: 'planets' })).toMatch(/Input validation error: .*dimension/s);
    expect(await refusal('get_kpis', { site_id: t.site.id, from: '2026-13-45' })).toBe('from must be a date (YYYY-MM-DD) or an RFC 3339 date-time');
    expect(await refusal('list_event_names', { site_id: 'not-a-uuid' })).toMatch(/Input validation error: .*site_id/s);
  });
});

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
/** One POST /mcp as a client without the SDK sends it. */
const send = (headers: Record<string, string>, body: unknown = initialize) =>
  fetch(`${t.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });

describe('POST /mcp: who may connect', () => {
  it('answers 401 with WWW-Authenticate: Bearer without a token, and to a session cookie alone', async () => {
    const noToken: Record<string, string>[] = [{}, { Cookie: viewer.cookie }];
    for (const headers of noToken) {
      const res = await send(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="mcp"');
      expect(await res.json()).toEqual({ message: '/mcp needs Authorization: Bearer <an API-client token with the mcp scope>', code: 'unauthorized' });
    }
    const forged = await send({ Authorization: 'Bearer plumb_not-a-real-token' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer realm="mcp"');
  });

  it('answers 403 to a token without the mcp scope, and the SDK client cannot connect with it', async () => {
    const res = await send({ Authorization: `Bearer ${statsOnlyToken}` });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: 'This token lacks the mcp scope', code: 'forbidden' });
    await expect(connect({ Authorization: `Bearer ${statsOnlyToken}` })).rejects.toThrow(/403|mcp scope/);
  });

  it('answers an initialize request as JSON, with no session id', async () => {
    const res = await send({ Authorization: `Bearer ${mcpToken}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = (await res.json()) as { id: number; result: { serverInfo: { name: string } } };
    expect(body.id).toBe(1);
    expect(body.result.serverInfo.name).toBe('Plumb');
  });

  it('refuses what is not an MCP request in the one error format, never with a 500', async () => {
    const token = { Authorization: `Bearer ${mcpToken}` };
    const notRpc = await send(token, { hello: 'world' });
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toEqual({ message: 'Parse error: Invalid JSON-RPC message', code: 'bad_request' });
    const noAccept = await send({ ...token, Accept: 'application/json' });
    expect(noAccept.status).toBe(406);
    expect((await noAccept.json()).code).toBe('not_acceptable');
  });

  it('answers GET and DELETE with 405 and Allow: POST (a stateless server has no stream and no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.url}/mcp`, { method, headers: { Authorization: `Bearer ${mcpToken}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect((await res.json()).code).toBe('method_not_allowed');
    }
  });
});

// Last: it leaves this node's API bucket for the test's address empty.
describe('POST /mcp: the API rate limit', () => {
  it('spends from the per-IP bucket of /api: once that bucket is empty, /mcp answers 429', async () => {
    const limits = t.node.runtime.rateLimits;
    const drain = () => {
      for (let taken = 0; taken <= 5001; taken++) {
        try {
          limits.consume('api', '127.0.0.1');
        } catch {
          return;
        }
      }
    };
    // The bucket refills continuously (a token a second here) and draining leaves a fraction of
    // one, so a token can be back before the request arrives on a loaded machine; that request
    // spends it, and the one after it finds the bucket empty.
    let res: Response;
    let attempts = 0;
    do {
      drain();
      res = await send({ Authorization: `Bearer ${mcpToken}` });
    } while (res.status === 200 && ++attempts < 3);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await res.json()).code).toBe('rate_limited');
  });
});
