// GET /api/sites/:id/stats, …/stats/timeseries and …/stats/breakdown through a real node, on a
// generated data set (deterministic PRNG: ~1,850 hits in ~430 visits, most over 40 days of a Berlin
// site, a year earlier, a 25-hour autumn day, live hits) whose true answers this file computes
// in plain JS from the same rows: KPIs, comparisons, buckets across DST, every breakdown, every
// filter operator and their AND, bad requests, and who may read. The rows are loaded straight into
// hits and events (a visitor's id being of one UTC day, as Plumb's are) and the visits rebuilt
// from them, as after a bulk import; test/integration/
// ingest-visits.test.ts checks that the visits the ingest pipeline writes give the same answers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { statsQueries } from '../../lib/analytics/query/batch.ts';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { seededRandom } from '../support/seeded-random.ts';

const TZ = 'Europe/Berlin';
const [SEC, HOUR, DAY] = [1000, 3_600_000, 86_400_000];
const at = (iso: string) => Date.parse(iso);
/** The site has no imported data: every answer says so (test/integration/imported-stats.test.ts has the rest). */
const NO_IMPORTED = { included: false, ranges: [] };

// ---- The data set ----
type Hit = Record<'session_id' | 'visitor_id' | 'path' | 'hostname' | 'referrer' | 'referrer_source' | 'channel' | 'country' | 'region' | 'browser' | 'os' | 'device', string> &
  Record<'utm_source' | 'utm_medium' | 'utm_campaign' | 'utm_term' | 'utm_content', string> & { ts: number; site: 'berlin' | 'other' };
type Ev = { ts: number; session_id: string; visitor_id: string; name: string; engagement_ms?: number; site: 'berlin' | 'other' };

const rand = seededRandom(20250330);
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

const NO_UTM = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' };
const came = (referrer: string, referrer_source: string, channel: string, utm: Partial<typeof NO_UTM> = {}) => ({ referrer, referrer_source, channel, ...NO_UTM, ...utm });
const [DIRECT, GOOGLE] = [came('', '', 'direct'), came('google.com', 'Google', 'search')];
const ACQUISITION = [
  ...[DIRECT, DIRECT, GOOGLE, GOOGLE, came('bing.com', 'Bing', 'search'), came('news.ycombinator.com', 'Hacker News', 'social')],
  ...[came('chatgpt.com', 'ChatGPT', 'ai'), came('perplexity.ai', 'Perplexity', 'ai'), came('claude.ai', 'Claude', 'ai'), came('blog.example.org', 'blog.example.org', 'referral')],
  came('', 'Newsletter', 'email', { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', utm_content: 'header' }),
  came('google.com', 'Google', 'paid', { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'brand', utm_term: 'plumb analytics' }),
];
const PLACES = [['DE', 'Bavaria'], ['DE', 'Berlin'], ['FR', 'Normandy'], ['US', 'California'], ['US', 'New York'], ['GB', 'England'], ['', '']];
const ENTRY_PAGES = ['/', '/', '/blog/hello-world', '/pricing', '/docs/getting-started', '/a:b'];
const PAGES = ['/', '/pricing', '/blog', '/blog/hello-world', '/blog/dst-explained', '/docs/getting-started', '/docs/api', '/about', '/a:b', '/100%_off', '/100x_off'];
const VISITORS = Array.from({ length: 180 }, (_, i) => {
  const [country, region] = pick(PLACES);
  return { visitor_id: String(9_000_000_000_000 + i * 7919), country, region, browser: pick(['Chrome', 'Firefox', 'Safari', 'Edge']), os: pick(['Windows', 'macOS', 'Linux', 'iOS', 'Android']), device: pick(['Desktop', 'Mobile', 'Tablet']) };
});

const hits: Hit[] = [];
const events: Ev[] = [];
let sessions = 0;
/** A visitor's id on the UTC day of `at`: Plumb's visitor ids change at each UTC midnight (lib/ingest/salts.ts). */
const idOnDay = (visitorId: string, at: number) => String(BigInt(visitorId) + BigInt(Math.floor(at / DAY)) * 10_000_000n);
function visit(start: number, site: Hit['site'] = 'berlin', pages = rand() < 0.3 ? 1 : int(2, 10), person = pick(VISITORS)) {
  const who = { ...person, visitor_id: idOnDay(person.visitor_id, start) };
  const session_id = String(1_000_000 + ++sessions);
  const source = pick(ACQUISITION);
  let ts = start;
  for (let i = 0; i < pages; i++) {
    const from = i === 0 ? source : { referrer: '', referrer_source: '', channel: 'internal', ...NO_UTM };
    hits.push({ ts, site, session_id, ...who, ...from, path: i === 0 ? pick(ENTRY_PAGES) : pick(PAGES), hostname: rand() < 0.1 ? 'shop.stats.example' : 'stats.example' });
    if (rand() < 0.4) events.push({ ts: ts + 400, site, session_id, visitor_id: who.visitor_id, name: '$engagement', engagement_ms: int(500, 90_000) });
    ts += int(5, 600) * SEC + int(0, 999);
  }
  if (rand() < 0.25) events.push({ ts: start + 700, site, session_id, visitor_id: who.visitor_id, name: pick(['signup', 'Outbound Link: Click', 'download']) });
}
const spread = (count: number, from: string, to: string, site?: Hit['site']) => {
  for (let i = 0; i < count; i++) visit(at(from) + Math.floor(rand() * (at(to) - at(from))), site);
};
spread(330, '2025-03-09T23:00:00Z', '2025-04-18T22:00:00Z'); // 40 local days, 2025-03-10 … 2025-04-18
// A server-side session key used from two devices: one visit with two visitor ids.
hits[hits.findIndex((h, i) => hits[i + 1]?.session_id === h.session_id) + 1].visitor_id = '8999999999999999';
spread(8, '2025-03-29T23:00:00Z', '2025-03-30T22:00:00Z'); // the 23-hour day
spread(50, '2024-03-09T23:00:00Z', '2024-04-18T22:00:00Z'); // a year earlier
spread(10, '2025-10-25T22:00:00Z', '2025-10-26T23:00:00Z'); // the 25-hour day…
visit(at('2025-10-26T00:30:00Z'), 'berlin', 1); // …with a visit in each of its two 02:00 hours
visit(at('2025-10-26T01:30:00Z'), 'berlin', 1);
for (const edge of ['2025-03-09T23:00:00Z', '2025-04-18T22:00:00Z']) visit(at(edge), 'berlin', 1); // exactly at the range's start (in) and end (out)
spread(20, '2025-03-09T23:00:00Z', '2025-04-18T22:00:00Z', 'other'); // another site of the team
// Live: three visitors in the last 5 minutes (one with two visits), two more a little earlier.
const NOW = Date.now();
for (const [ago, who] of [[30, 0], [60, 1], [90, 2], [100, 2], [7 * 60, 3], [9 * 60, 4]]) visit(NOW - ago * SEC, 'berlin', 1, VISITORS[who]);

// ---- True answers, in plain JS ----
type Row = { value: string; visitors: number; visits: number; pageviews: number; bounce_rate: number; visit_duration: number };
const VISIT_VALUE: Record<string, (h: Hit[]) => string> = {
  entry_page: (h) => h[0].path,
  exit_page: (h) => h[h.length - 1].path,
  ...Object.fromEntries(['referrer', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'country', 'region', 'browser', 'os', 'device'].map((c) => [c, (h: Hit[]) => h[0][c as 'os']])),
  source: (h) => h[0].referrer_source,
};
const HIT_VALUE: Record<string, 'path' | 'hostname'> = { page: 'path', hostname: 'hostname' };

function holds(op: string, value: string, operand: string): boolean {
  if (op === 'is' || op === 'is_not') return operand.split('|').includes(value);
  if (op === 'contains') return value.includes(operand);
  return new RegExp(`^${operand.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '*' ? '.*' : `\\${c}`))}$`).test(value);
}
function visitMatches(h: Hit[], filter: string): boolean {
  const [dimension, op] = filter.split(':', 2);
  const operand = filter.slice(dimension.length + op.length + 2);
  const column = HIT_VALUE[dimension];
  if (column) return op === 'is_not' ? !h.some((x) => holds('is', x[column], operand)) : h.some((x) => holds(op, x[column], operand));
  const value = VISIT_VALUE[dimension](h);
  return op === 'is_not' ? !holds('is', value, operand) : holds(op, value, operand);
}

/** The visits (each a session's hits of all time, in order) that started in [from, to) and pass the filters. */
function truth(from: number, to: number, filters: string[] = []) {
  const bySession = new Map<string, Hit[]>();
  for (const h of hits.filter((x) => x.site === 'berlin').sort((a, b) => a.ts - b.ts)) bySession.set(h.session_id, [...(bySession.get(h.session_id) ?? []), h]);
  const visits = [...bySession.values()].filter((h) => h[0].ts >= from && h[0].ts < to && filters.every((f) => visitMatches(h, f)));
  const ofSite = events.filter((e) => e.site === 'berlin');
  const converted = new Set(ofSite.filter((e) => e.name !== '$engagement').map((e) => e.session_id));
  const bounced = (h: Hit[]) => h.length === 1 && !converted.has(h[0].session_id);
  const duration = (h: Hit[]) => h[h.length - 1].ts - h[0].ts;
  // A visit's visitor is its first pageview's (one session key can be used from two devices).
  const visitorOf = (h: Hit[]) => h[0].visitor_id;
  const kept = new Set(visits.map((h) => h[0].session_id));
  const engagement = ofSite.filter((e) => e.name === '$engagement' && kept.has(e.session_id)).reduce((sum, e) => sum + e.engagement_ms!, 0);
  const n = visits.length;
  const pageviews = visits.reduce((sum, h) => sum + h.length, 0);
  const kpis = {
    visitors: new Set(visits.map(visitorOf)).size,
    visits: n,
    pageviews,
    views_per_visit: n ? Math.round((100 * pageviews) / n) / 100 : 0,
    bounce_rate: n ? Math.round((1000 * visits.filter(bounced).length) / n) / 10 : 0,
    visit_duration: n ? Math.round(visits.reduce((s, h) => s + duration(h), 0) / n / 1000) : 0,
    engagement_time: n ? Math.round(engagement / n / 1000) : 0,
  };
  const series = (keyOf: (ms: number) => string, keys: string[]) =>
    keys.map((key) => {
      const started = visits.filter((h) => keyOf(h[0].ts) === key);
      return [key, new Set(started.map(visitorOf)).size, started.length, started.reduce((sum, h) => sum + h.length, 0)];
    });
  const breakdown = (dimension: string): Row[] => {
    const groups = new Map<string, { visitors: Set<string>; visits: Hit[][]; pageviews: number }>();
    for (const h of visits) {
      const values = HIT_VALUE[dimension] ? [...new Set(h.map((x) => x[HIT_VALUE[dimension]]))] : [VISIT_VALUE[dimension](h)];
      for (const value of values) {
        const mine = HIT_VALUE[dimension] ? h.filter((x) => x[HIT_VALUE[dimension]] === value) : h;
        const g = groups.get(value) ?? { visitors: new Set(), visits: [], pageviews: 0 };
        g.visitors.add(visitorOf(h)); // the visitors of the row's visits
        g.visits.push(h);
        g.pageviews += mine.length;
        groups.set(value, g);
      }
    }
    const row = ([value, g]: [string, { visitors: Set<string>; visits: Hit[][]; pageviews: number }]): Row => ({ value, visitors: g.visitors.size, visits: g.visits.length, pageviews: g.pageviews,
      bounce_rate: Math.round((1000 * g.visits.filter(bounced).length) / g.visits.length) / 10, visit_duration: Math.round(g.visits.reduce((s, v) => s + duration(v), 0) / g.visits.length / 1000) });
    return [...groups.entries()]
      .map(row)
      .sort((a, b) => b.visitors - a.visitors || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  };
  return { kpis, series, breakdown };
}

const localDay = new Intl.DateTimeFormat('en-CA', { timeZone: TZ, year: 'numeric', month: '2-digit', day: '2-digit' });
const localTime = new Intl.DateTimeFormat('en-GB', { timeZone: TZ, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayOf = (ms: number) => localDay.format(ms);
const mondayOf = (ms: number, d = new Date(`${dayOf(ms)}T00:00:00Z`)) => new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY).toISOString().slice(0, 10);
const dates = (first: string, count: number, step = 1) => Array.from({ length: count }, (_, i) => new Date(at(`${first}T00:00:00Z`) + i * step * DAY).toISOString().slice(0, 10));
const hoursFrom = (first: string, count: number) => Array.from({ length: count }, (_, i) => new Date(at(first) + i * HOUR).toISOString());

// ---- The node ----
let t: TestNode;
let site: Site;
let viewer: Person;
let outsider: Person;
const RANGE = { from: '2025-03-10', to: '2025-04-18' };
const RANGE_MS = [at('2025-03-09T23:00:00Z'), at('2025-04-18T22:00:00Z')] as const;

async function get(path: string, query: Record<string, string | string[]> = {}, who: Person | undefined = viewer) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) for (const v of [value].flat()) search.append(key, v);
  return as(t, who, 'GET', `/api/sites/${site.id}/${path}?${search}`);
}
const stats = (query: Record<string, string | string[]>) => get('stats', query);
// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
const body = (res: { body: unknown }) => res.body as any;

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  site = await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain: 'stats.example', timezone: TZ });
  [viewer, outsider] = await Promise.all([person(t), person(t)]);
  await t.node.runtime.metadata().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, viewer.id, 'viewer']);
  const analytics = t.node.runtime.analytics();
  const database = analytics.tenantDatabase(t.team.id);
  const siteId = (s: Hit['site']) => (s === 'berlin' ? site.id : t.site.id);
  await analytics.insert('hits', hits.map(({ site: s, ts, ...h }) => ({ ...h, ts: new Date(ts), site_id: siteId(s), hit_id: crypto.randomUUID(), screen_width: 1280, is_entry: 0, source: 'tracker' })), { database });
  await analytics.insert('events', events.map(({ site: s, ts, engagement_ms, ...e }) => ({ ...e, ts: new Date(ts), site_id: siteId(s), event_id: crypto.randomUUID(), props: engagement_ms === undefined ? {} : { engagement_ms: String(engagement_ms) }, source: 'tracker' })), { database });
  await rebuildVisits(analytics, database);
}, 60_000);

afterAll(() => t.stop());

describe('GET /api/sites/:id/stats', () => {
  it('answers the KPIs of a range, with live visitors of the last 5 minutes', async () => {
    const res = await stats(RANGE);
    expect(res.status).toBe(200);
    expect(body(res).range).toEqual({ from: '2025-03-09T23:00:00.000Z', to: '2025-04-18T22:00:00.000Z', timezone: TZ, interval: 'day' });
    expect(body(res).kpis).toEqual({ ...truth(...RANGE_MS).kpis, live_visitors: 3 });
    expect(body(res).comparison).toBeUndefined();
    expect([hits.length > 1800 && hits.length < 2600, new Set(hits.map((h) => h.session_id)).size > 400, body(res).kpis.visits > 300]).toEqual([true, true, true]);
  });

  it('answers zeros and empty buckets where nothing happened', async () => {
    const res = await stats({ from: '2020-01-01', to: '2020-01-03', compare: 'previous_period' });
    const zero = { visitors: 0, visits: 0, pageviews: 0, views_per_visit: 0, bounce_rate: 0, visit_duration: 0, engagement_time: 0 };
    expect(body(res).kpis).toEqual({ ...zero, live_visitors: expect.any(Number) });
    expect(body(res).comparison.kpis).toEqual(zero);
    const buckets = ['2019-12-31T23:00:00.000Z', '2020-01-01T23:00:00.000Z', '2020-01-02T23:00:00.000Z'];
    expect(body(res).timeseries).toEqual(buckets.map((bucket) => ({ bucket, visitors: 0, visits: 0, pageviews: 0 })));
  });

  it.each([
    ['previous_period', {}, '2025-03-17T22:00:00.000Z', '2025-03-31T22:00:00.000Z'],
    ['year', {}, '2024-03-31T22:00:00.000Z', '2024-04-14T22:00:00.000Z'],
    ['custom', { compare_from: '2025-03-10', compare_to: '2025-03-20' }, '2025-03-09T23:00:00.000Z', '2025-03-20T23:00:00.000Z'],
  ])('compares with compare=%s', async (compare, extra, from, to) => {
    const res = await stats({ from: '2025-04-01', to: '2025-04-14', compare, ...extra, filter: 'device:is_not:Tablet' });
    expect(res.status).toBe(200);
    expect(body(res).kpis).toEqual({ ...truth(at('2025-03-31T22:00:00Z'), at('2025-04-14T22:00:00Z'), ['device:is_not:Tablet']).kpis, live_visitors: expect.any(Number) });
    expect(body(res).comparison).toEqual({ range: { from, to, timezone: TZ, interval: 'day' }, kpis: truth(at(from), at(to), ['device:is_not:Tablet']).kpis, imported: NO_IMPORTED });
    expect(body(res).comparison.kpis.visits).toBeGreaterThan(0);
  });

  it('lists every local day of the range, zero-filled, each starting at local midnight', async () => {
    const res = await stats({ from: '2025-03-01', to: '2025-04-18' });
    const points = body(res).timeseries as { bucket: string }[];
    expect(points).toHaveLength(49);
    expect(points.filter((p) => p.bucket.startsWith('2025-03-29') || p.bucket.startsWith('2025-03-30')).map((p) => p.bucket)).toEqual(['2025-03-29T23:00:00.000Z', '2025-03-30T22:00:00.000Z']);
    expect(points.every((p) => localTime.format(Date.parse(p.bucket)) === '00:00')).toBe(true);
    const expected = truth(at('2025-02-28T23:00:00Z'), RANGE_MS[1]).series(dayOf, dates('2025-03-01', 49));
    expect(body(res).timeseries.map((p: Record<string, string>) => [dayOf(Date.parse(p.bucket)), p.visitors, p.visits, p.pageviews])).toEqual(expected);
    expect(expected.slice(0, 9).every(([, , , pageviews]) => pageviews === 0)).toBe(true);
  });

  it.each([
    ['2025-03-30', 23, '2025-03-29T23:00:00.000Z'],
    ['2025-10-26', 25, '2025-10-25T22:00:00.000Z'],
  ])('gives the DST day %s its %d hourly buckets', async (day, count, first) => {
    const res = await stats({ from: day, to: day });
    expect(body(res).range.interval).toBe('hour');
    const keys = hoursFrom(first, count);
    expect(body(res).timeseries.map((p: { bucket: string }) => p.bucket)).toEqual(keys);
    const expected = truth(at(first), at(first) + count * HOUR).series((ms) => new Date(Math.floor(ms / HOUR) * HOUR).toISOString(), keys);
    expect(body(res).timeseries.map((p: Record<string, string>) => [p.bucket, p.visitors, p.visits, p.pageviews])).toEqual(expected);
    expect(expected.reduce((sum, p) => sum + (p[3] as number), 0)).toBeGreaterThan(0);
  });

  it('puts the two 02:00 hours of the autumn change in two buckets', async () => {
    const res = await stats({ from: '2025-10-26', to: '2025-10-26', interval: 'hour' });
    const twoAm = body(res).timeseries.filter((p: { bucket: string }) => localTime.format(Date.parse(p.bucket)) === '02:00');
    expect(twoAm.map((p: { bucket: string }) => p.bucket)).toEqual(['2025-10-26T00:00:00.000Z', '2025-10-26T01:00:00.000Z']);
    expect(twoAm.every((p: { pageviews: number }) => p.pageviews >= 1)).toBe(true);
    const twoDays = body(await stats({ from: '2025-10-25', to: '2025-10-26' })); // 49 real hours, still "2 days"
    expect([twoDays.range.interval, twoDays.timeseries.length]).toEqual(['hour', 49]);
  });

  it('buckets by week (Monday first, the first week starting before the range) for up to 26 weeks', async () => {
    const res = await stats({ from: '2025-03-12', to: '2025-05-31' });
    expect(body(res).range.interval).toBe('week');
    expect(body(res).timeseries[0].bucket).toBe('2025-03-09T23:00:00.000Z');
    const expected = truth(at('2025-03-11T23:00:00Z'), at('2025-05-31T22:00:00Z')).series(mondayOf, dates('2025-03-10', 12, 7));
    expect(body(res).timeseries.map((p: Record<string, string>) => [dayOf(Date.parse(p.bucket)), p.visitors, p.visits, p.pageviews])).toEqual(expected);
  });

  it('buckets by month beyond 26 weeks, and takes an explicit interval', async () => {
    const months = Array.from({ length: 20 }, (_, i) => `${2024 + Math.floor((2 + i) / 12)}-${String(((2 + i) % 12) + 1).padStart(2, '0')}`);
    const res = await stats({ from: '2024-03-01', to: '2025-10-31' });
    expect(body(res).range.interval).toBe('month');
    const expected = truth(at('2024-02-29T23:00:00Z'), at('2025-10-31T23:00:00Z')).series((ms) => dayOf(ms).slice(0, 7), months);
    expect(body(res).timeseries.map((p: Record<string, string>) => [dayOf(Date.parse(p.bucket)).slice(0, 7), p.visitors, p.visits, p.pageviews])).toEqual(expected);
    expect(body(res).timeseries.every((p: { bucket: string }) => dayOf(Date.parse(p.bucket)).endsWith('-01') && localTime.format(Date.parse(p.bucket)) === '00:00')).toBe(true);
    const explicit = await stats({ ...RANGE, interval: 'month' });
    expect(body(explicit).timeseries.map((p: { bucket: string }) => p.bucket)).toEqual(['2025-02-28T23:00:00.000Z', '2025-03-31T22:00:00.000Z']);
    expect(body(await stats({ ...RANGE, interval: 'hour' })).timeseries).toHaveLength(40 * 24 - 1);
  });
});

describe('filters', () => {
  it.each([
    [['page:is:/pricing']], [['page:is:/pricing|/about']], [['page:is_not:/pricing']], [['page:contains:blog']], [['page:matches:/blog/*']],
    [['page:matches:*100%_off']], [['page:is:/a:b']], [['entry_page:is:/']], [['exit_page:contains:docs']], [['exit_page:is_not:/|/about']],
    [['hostname:is:shop.stats.example']], [['source:is:Google|Bing']], [['source:is_not:Google']], [['channel:is:ai']], [['referrer:contains:.ai']],
    [['utm_source:is:newsletter']], [['utm_medium:is_not:cpc']], [['utm_campaign:matches:spr*']], [['utm_term:contains:plumb']],
    [['utm_content:is:header']], [['country:is:DE']], [['region:matches:*a*']], [['browser:is_not:Chrome|Safari']], [['os:contains:OS']],
    [['device:is:Mobile']], [['country:is:DE', 'page:contains:/docs', 'device:is_not:Tablet']], [['channel:is:search', 'entry_page:is:/']],
  ])('%j keeps the matching visits, for the KPIs and the timeseries', async (filter) => {
    const res = await stats({ ...RANGE, filter });
    expect(res.status).toBe(200);
    const expected = truth(...RANGE_MS, filter);
    expect(body(res).kpis).toEqual({ ...expected.kpis, live_visitors: expect.any(Number) });
    expect(expected.kpis.visits).toBeGreaterThan(0);
    expect(expected.kpis.visits).toBeLessThan(truth(...RANGE_MS).kpis.visits);
    expect(body(res).timeseries.map((p: Record<string, string>) => [dayOf(Date.parse(p.bucket)), p.visitors, p.visits, p.pageviews])).toEqual(expected.series(dayOf, dates('2025-03-10', 40)));
  });

  it('escapes LIKE wildcards in matches: % and _ match only themselves', () => {
    expect(truth(...RANGE_MS, ['page:matches:*100%_off']).kpis.visits).toBeLessThan(truth(...RANGE_MS, ['page:contains:/100']).kpis.visits);
  });

  it('splits the visits in two with is and is_not on a page', async () => {
    const [is, isNot] = await Promise.all([stats({ ...RANGE, filter: 'page:is:/about' }), stats({ ...RANGE, filter: 'page:is_not:/about' })]);
    expect(body(is).kpis.visits + body(isNot).kpis.visits).toBe(truth(...RANGE_MS).kpis.visits);
  });

  it.each([
    ['colour:is:red', 'filter "colour:is:red": the dimension must be one of: page, '],
    ['page:like:/a', 'filter "page:like:/a": the operator must be one of: is, is_not, contains, matches'],
    ['page:is:', 'filter "page:is:": the value must not be empty'],
    ['page', 'filter "page": write it as dimension:operator:value'],
  ])('refuses filter=%s with a 400 naming it', async (filter, message) => {
    for (const path of ['stats', 'stats/timeseries', 'stats/breakdown']) {
      const res = await get(path, { ...RANGE, dimension: 'pages', filter: ['country:is:DE', filter] });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.fields).toEqual([{ field: 'filter', message: expect.stringContaining(message), type: 'filter' }]);
    }
  });
});

describe('bad requests', () => {
  it.each([
    [{ compare: 'custom' }, 'compare_from is required with compare=custom; compare_to is required with compare=custom'],
    [{ compare_from: '2025-01-01', compare_to: '2025-01-31' }, 'compare must be custom with compare_from and compare_to'],
    [{ compare: 'custom', compare_from: '2025-01-31', compare_to: '2025-01-01' }, 'compare_to must be after compare_from'],
    [{ from: '2025-04-18', to: '2025-03-10' }, 'to must be after from'],
    [{ from: 'last week' }, 'from must be a date'],
    [{ from: '2015-01-01', to: '2025-01-01', interval: 'hour' }, 'interval hour would give more than 5000 buckets'],
    [{ interval: 'minute' }, 'interval'],
    [{ compare: 'tomorrow' }, 'compare'],
  ])('refuses %j', async (query, message) => {
    const res = await stats(query);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(message);
  });

  it('refuses an unknown breakdown dimension, or none', async () => {
    for (const dimension of ['colours', undefined]) {
      const res = await get('stats/breakdown', dimension ? { dimension } : {});
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });
});

const DIMENSIONS: [string, string][] = [
  ['pages', 'page'], ['entry_pages', 'entry_page'], ['exit_pages', 'exit_page'], ['hostnames', 'hostname'], ['sources', 'source'],
  ['channels', 'channel'], ['referrers', 'referrer'], ['utm_source', 'utm_source'], ['utm_medium', 'utm_medium'], ['utm_campaign', 'utm_campaign'],
  ['utm_term', 'utm_term'], ['utm_content', 'utm_content'], ['countries', 'country'], ['regions', 'region'], ['browsers', 'browser'], ['os', 'os'], ['devices', 'device'],
];

describe('GET /api/sites/:id/stats/breakdown', () => {
  it.each(DIMENSIONS)('%s: every value, most visitors first', async (dimension, column) => {
    const res = await get('stats/breakdown', { ...RANGE, dimension, limit: '200' });
    expect(res.status).toBe(200);
    const rows = truth(...RANGE_MS).breakdown(column);
    expect(res.body).toEqual({ dimension, rows, total: rows.length, limit: 200, offset: 0, has_more: false, imported: NO_IMPORTED });
    expect(rows.length).toBeGreaterThan(1);
  });

  it('ai_assistants: the sources of visits from the ai channel', async () => {
    const res = await get('stats/breakdown', { ...RANGE, dimension: 'ai_assistants' });
    const rows = truth(...RANGE_MS, ['channel:is:ai']).breakdown('source');
    expect(rows.map((r) => r.value).sort()).toEqual(['ChatGPT', 'Claude', 'Perplexity']);
    expect(body(res).rows).toEqual(rows);
  });

  it('applies filters, and pages with limit and offset', async () => {
    const filter = ['country:is:DE|US', 'page:contains:/blog'];
    const rows = truth(...RANGE_MS, filter).breakdown('page');
    expect(body(await get('stats/breakdown', { ...RANGE, dimension: 'pages', filter, limit: '3' }))).toEqual({ dimension: 'pages', rows: rows.slice(0, 3), total: rows.length, limit: 3, offset: 0, has_more: true, imported: NO_IMPORTED });
    expect(body(await get('stats/breakdown', { ...RANGE, dimension: 'pages', filter, limit: '3', offset: String(rows.length - 1) })).rows).toEqual(rows.slice(-1));
    expect(body(await get('stats/breakdown', { ...RANGE, dimension: 'pages', filter, offset: '500' }))).toEqual({ dimension: 'pages', rows: [], total: rows.length, limit: 25, offset: 500, has_more: false, imported: NO_IMPORTED });
  });

  it('answers panels asked for together while the store is busy (one GROUPING SETS query) exactly as one by one', async () => {
    const analytics = t.node.runtime.analytics();
    const original = analytics.query.bind(analytics);
    const statements: string[] = [];
    const asked: [string, string, Record<string, string>][] = [
      ['sources', 'source', { limit: '3' }],
      ['countries', 'country', { limit: '2', offset: '1' }],
      ['exit_pages', 'exit_page', {}],
      ['browsers', 'browser', { offset: '500' }],
      ['utm_source', 'utm_source', {}],
    ];
    // The stats request's queries hold the store until every panel is waiting, as on a dashboard
    // load where the panels arrive while the KPIs are computed.
    const allWaiting = waitFor(async () => statsQueries(analytics).waitingRequests() === asked.length, 10_000, () => 'the panels never all waited');
    analytics.query = (async (sql: string, params?: Record<string, unknown>) => {
      statements.push(sql);
      await allWaiting;
      return original(sql, params);
    }) as typeof analytics.query;
    try {
      const filter = ['device:is_not:Tablet'];
      const [, ...answers] = await Promise.all([
        stats({ ...RANGE, filter }),
        ...asked.map(([dimension, , page]) => get('stats/breakdown', { ...RANGE, dimension, filter, ...page })),
      ]);
      for (const [index, [dimension, truthDimension, page]] of asked.entries()) {
        const rows = truth(...RANGE_MS, filter).breakdown(truthDimension);
        const [limit, offset] = [Number(page.limit ?? 25), Number(page.offset ?? 0)];
        expect([dimension, body(answers[index])]).toEqual([
          dimension,
          { dimension, rows: rows.slice(offset, offset + limit), total: rows.length, limit, offset, has_more: offset + limit < rows.length, imported: NO_IMPORTED },
        ]);
      }
      expect(statements.filter((sql) => sql.includes('GROUPING SETS')).length).toBe(1);
    } finally {
      analytics.query = original;
    }
  });

  it('gives each row the visitors of the comparison period', async () => {
    const res = await get('stats/breakdown', { from: '2025-04-01', to: '2025-04-14', dimension: 'sources', compare: 'previous_period' });
    const now = truth(at('2025-03-31T22:00:00Z'), at('2025-04-14T22:00:00Z')).breakdown('source');
    const before = truth(at('2025-03-17T22:00:00Z'), at('2025-03-31T22:00:00Z')).breakdown('source');
    const visitorsBefore = (value: string) => before.find((r) => r.value === value)?.visitors ?? 0;
    expect(body(res).rows).toEqual(now.slice(0, 10).map((r) => ({ ...r, comparison: { visitors: visitorsBefore(r.value) } })));
  });
});

describe('GET /api/sites/:id/stats/kpis', () => {
  it('answers the KPIs of a range and of its comparison alone, as /stats does, without live visitors', async () => {
    const query = { from: '2025-04-01', to: '2025-04-14', compare: 'previous_period', filter: 'device:is_not:Tablet' };
    const res = await get('stats/kpis', query);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['range', 'kpis', 'imported', 'comparison']);
    const [from, to] = ['2025-03-31T22:00:00.000Z', '2025-04-14T22:00:00.000Z'];
    expect(body(res).range).toEqual({ from, to, timezone: TZ });
    expect(body(res).kpis).toEqual(truth(at(from), at(to), ['device:is_not:Tablet']).kpis);
    expect(body(res).comparison).toEqual({ range: { from: '2025-03-17T22:00:00.000Z', to: from, timezone: TZ }, kpis: truth(at('2025-03-17T22:00:00Z'), at(from), ['device:is_not:Tablet']).kpis, imported: NO_IMPORTED });
    const full = body(await stats(query));
    expect([body(res).kpis, body(res).comparison.kpis]).toEqual([{ ...full.kpis, live_visitors: undefined }, full.comparison.kpis].map((k) => JSON.parse(JSON.stringify(k))));
  });

  it('refuses what /stats refuses', async () => {
    const refused: Record<string, string>[] = [{ compare: 'custom' }, { from: 'last week' }, { filter: 'colour:is:red' }];
    for (const query of refused) {
      const res = await get('stats/kpis', query);
      expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
    }
  });
});

describe('GET /api/sites/:id/stats/timeseries', () => {
  it('answers the range and its buckets alone', async () => {
    const res = await get('stats/timeseries', { ...RANGE, filter: 'channel:is:search' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['range', 'timeseries', 'imported']);
    expect(body(res).timeseries.map((p: Record<string, string>) => [dayOf(Date.parse(p.bucket)), p.visitors, p.visits, p.pageviews])).toEqual(truth(...RANGE_MS, ['channel:is:search']).series(dayOf, dates('2025-03-10', 40)));
  });
});

describe('who may read stats', () => {
  const paths = ['stats', 'stats/kpis', 'stats/timeseries', 'stats/breakdown?dimension=pages'];
  const call = (path: string, headers: Record<string, string>) => fetch(`${t.url}/api/sites/${site.id}/${path}`, { headers }).then((r) => r.status);

  it('lets a viewer and a stats:read token in; not an outsider, a token without the scope, or nobody', async () => {
    const db = t.node.runtime.metadata();
    const reader = (await createApiClient(db, { name: 'reader', scopes: ['stats:read'], sites: [{ siteId: site.id, role: 'viewer' }], ownerUserId: viewer.id })).token;
    const writer = (await createApiClient(db, { name: 'writer', scopes: ['ingest:write'], sites: [{ siteId: site.id, role: 'owner' }], ownerUserId: viewer.id })).token;
    for (const path of paths) {
      expect([path, await call(path, { Cookie: viewer.cookie })]).toEqual([path, 200]);
      expect([path, await call(path, { Authorization: `Bearer ${reader}` })]).toEqual([path, 200]);
      expect([path, await call(path, { 'X-API-Key': reader })]).toEqual([path, 200]);
      expect([path, await call(path, { Cookie: outsider.cookie })]).toEqual([path, 404]);
      expect([path, await call(path, { Authorization: `Bearer ${writer}` })]).toEqual([path, 403]);
      expect([path, await call(path, {})]).toEqual([path, 401]);
    }
    const denied = await fetch(`${t.url}/api/sites/${site.id}/stats`, { headers: { Authorization: `Bearer ${writer}` } }).then((r) => r.json());
    expect(denied).toEqual({ message: 'This token lacks the stats:read scope', code: 'forbidden' });
  });
});
