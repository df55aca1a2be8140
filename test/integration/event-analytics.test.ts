// Event analytics over HTTP (GET /api/sites/:id/events/…) on a real node: a generated, seeded set
// of custom events and of the visits that sent them on a New York site across the March 2026 DST
// change, each endpoint's rows checked against answers computed here in plain JS, every filter
// combination the API allows, parameter errors, and who may read.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { seededRandom } from '../support/seeded-random.ts';

/** Where a visit came from, named as the dashboard names it, and its device and country. */
interface Origin {
  referrer: string;
  device: string;
  country: string;
}
/** An event, with its own origin (its page's referrer, its request's device and country). */
interface Row extends Origin {
  at: number;
  site_id: string;
  session_id: number;
  visitor_id: number;
  name: string;
  path: string;
  props: Record<string, string>;
  /** The session's visit (absent for a session of events only); its origin is what the audience shows. */
  visit?: Origin & { start: number; states: 1 | 3 };
}
type Dimension = 'path' | 'referrer' | 'device' | 'country';
type Query = Record<string, string>;

const TZ = 'America/New_York';
// Local days 6–10 March 2026 in New York; clocks go forward on the 8th, a 23-hour day.
const RANGE = { from: '2026-03-06', to: '2026-03-10' };
const START = Date.parse('2026-03-06T05:00:00Z'); // midnight EST
const END = Date.parse('2026-03-11T04:00:00Z'); // midnight EDT after the 10th
const DAY_STARTS = ['2026-03-06T05:00:00.000Z', '2026-03-07T05:00:00.000Z', '2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z', '2026-03-10T04:00:00.000Z'];
// 7–8 March: 47 hours, from midnight EST on the 7th to midnight EDT after the 8th.
const TWO_DAYS = { from: '2026-03-07', to: '2026-03-08' };
const TWO_DAYS_START = Date.parse('2026-03-07T05:00:00Z');
const TWO_DAYS_END = Date.parse('2026-03-09T04:00:00Z');
const DIMENSIONS: Dimension[] = ['path', 'referrer', 'device', 'country'];
const NAMES = ['signup', 'signup', 'purchase', 'download', 'download', 'share', '$engagement', '$engagement'];
const PATHS = Array.from({ length: 14 }, (_, i) => (i === 0 ? '/' : `/page-${i}`));
// Sources as ingest names them (the dashboard's Sources panel): '' is direct.
const SOURCES = ['', '', 'Google', 'Hacker News', 'X', 'DuckDuckGo', 'example.org'];
// The referrer of the page an event was sent on: mostly the site itself (''), sometimes not.
const EVENT_SOURCES = ['', '', '', 'Hacker News', 'news.example.net'];
const DEVICES = ['desktop', 'desktop', 'mobile', 'tablet'];
const COUNTRIES = ['US', 'US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'CA', 'ES', 'IT', 'NL', 'SE', ''];
const FILES = ['a.pdf', 'b.zip', 'report Q1 & “final”.pdf'];

/**
 * 90 sessions from 4 to 12 March (UTC), a few events each, on the site and some on another site.
 * Most have a visit that started up to an hour before their first event (one two hours before,
 * outside the range), some written as a state, its cancellation and the next state (unmerged, as
 * ingest leaves them); an event's own origin differs from its visit's now and then (another page's
 * referrer, another network, another UA). Sessions without a visit sent events only.
 */
function generate(siteId: string, otherSiteId: string): Row[] {
  const r = seededRandom(20260308);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const rows: Row[] = [];
  let signups = 0;
  for (let s = 0; s < 90; s++) {
    // The second session's events start just inside the range, its visit two hours before it.
    const start = s === 1 ? START + 600_000 : Date.parse('2026-03-04T00:00:00Z') + Math.floor(r() * 8 * 86_400_000);
    const visitStart = s === 1 ? START - 7_200_000 : start - Math.floor(r() * 3_600_000);
    const visit = s % 5 === 4 ? undefined : ({ referrer: pick(SOURCES), device: pick(DEVICES), country: pick(COUNTRIES), start: visitStart, states: s % 3 === 0 ? 3 : 1 } as const);
    const own = () => ({
      referrer: visit ? pick(EVENT_SOURCES) : pick(SOURCES),
      device: visit && r() < 0.8 ? visit.device : pick(DEVICES),
      country: visit && r() < 0.8 ? visit.country : pick(COUNTRIES),
    });
    const session = { session_id: 10_000 + s, visitor_id: 500 + (s % 70), ...(visit ? { visit } : {}) };
    const siteIdOf = s % 9 === 8 ? otherSiteId : siteId;
    const count = 1 + Math.floor(r() * 6);
    for (let e = 0; e < count; e++) {
      const name = pick(NAMES);
      const props: Record<string, string> = {};
      if (name === 'signup') {
        // Every seventh signup has an empty plan: a value of its own, not a missing key.
        props.plan = ++signups % 7 === 0 ? '' : pick(['free', 'pro', 'pro', 'team']);
        if (r() < 0.5) props.source = pick(['ad', 'blog']);
      } else if (name === 'purchase') {
        props.plan = pick(['pro', 'team']);
        props.currency = pick(['EUR', 'USD']);
      } else if (name === 'download') {
        props.file = pick(FILES);
      }
      rows.push({ ...session, ...own(), site_id: siteIdOf, at: start + e * 7 * 60_000 + Math.floor(r() * 60_000), name, path: pick(PATHS), props });
    }
  }
  return rows;
}

/** The raw referrer host beside the source name, as ingest stores them: answers must give the name. */
const referrerColumns = (source: string) => ({ referrer_source: source, referrer: ({ Google: 'google.com', 'Hacker News': 'news.ycombinator.com', X: 't.co', DuckDuckGo: 'duckduckgo.com' } as Record<string, string>)[source] ?? source });

/** Each session's visit as ingest leaves it before merges: one state, or a state, its cancellation and the next. */
function visitRows(list: Row[]) {
  const seen = new Set<number>();
  return list.flatMap(({ site_id, session_id, visitor_id, visit }) => {
    if (!visit || seen.has(session_id)) return [];
    seen.add(session_id);
    const last = Math.max(...list.filter((row) => row.session_id === session_id).map((row) => row.at));
    const row = { site_id, session_id, visitor_id, start: new Date(visit.start), first_ts: new Date(visit.start), last_ts: new Date(last), visit_pageviews: 2, entry_page: '/', exit_page: '/', device: visit.device, country: visit.country, ...referrerColumns(visit.referrer) };
    const states = [{ sign: 1, version: 1 }, ...(visit.states === 3 ? [{ sign: -1, version: 1 }, { sign: 1, version: 2 }] : [])];
    return states.map((state) => ({ ...row, ...state }));
  });
}

let t: TestNode;
let site: Site;
let rows: Row[];
let viewer: Person;
let stranger: Person;
const tokens: Record<'read' | 'noScope', string> = { read: '', noScope: '' };

// ---- answers computed here, over the generated rows ----
const inRange = (from = START, to = END) => rows.filter((row) => row.site_id === site.id && row.at >= from && row.at < to);
const sessionsOf = (list: Row[]) => new Set(list.map((row) => row.session_id)).size;
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
function groups(list: Row[], keyOf: (row: Row) => string | undefined): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const row of list) {
    const key = keyOf(row);
    if (key !== undefined) out.set(key, [...(out.get(key) ?? []), row]);
  }
  return out;
}
const hasProp = (row: Row, key: string) => Object.hasOwn(row.props, key);
type Filters = { event: string; property?: [string, string]; dimension?: [Dimension, string] };
/** A dimension's value for an event: the page it was sent on, else its visit's (its own without a visit). */
const dimensionOf = (row: Row, d: Dimension) => (d === 'path' || !row.visit ? row[d] : row.visit[d]);
const passes = (row: Row, f: Filters) =>
  row.name === f.event && (!f.property || (hasProp(row, f.property[0]) && row.props[f.property[0]] === f.property[1])) && (!f.dimension || dimensionOf(row, f.dimension[0]) === f.dimension[1]);
const matching = (list: Row[], f: Filters) => list.filter((row) => passes(row, f));
const filterQuery = (f: Filters): Query => ({
  event_name: f.event,
  ...(f.property ? { property_key: f.property[0], property_value: f.property[1] } : {}),
  ...(f.dimension ? { dimension_key: f.dimension[0], dimension_value: f.dimension[1] } : {}),
});
function expectedAudience(list: Row[]) {
  const panel = (d: Dimension) =>
    [...groups(list, (row) => dimensionOf(row, d))]
      .map(([value, of]) => ({ value, unique_sessions: sessionsOf(of) }))
      .sort((a, b) => b.unique_sessions - a.unique_sessions || byteOrder(a.value, b.value))
      .slice(0, 10);
  return { path: panel('path'), referrer: panel('referrer'), device: panel('device'), country: panel('country') };
}
/** Rows counted into buckets given by their start instants. */
function expectedSeries(list: Row[], starts: number[], end: number) {
  return starts.map((start, i) => {
    const inside = list.filter((row) => row.at >= start && row.at < (starts[i + 1] ?? end));
    return { bucket: new Date(start).toISOString(), unique_sessions: sessionsOf(inside), events: inside.length };
  });
}
/** The most common value of a dimension among rows, so filters select something real. */
const commonest = (list: Row[], d: Dimension) => [...groups(list, (row) => dimensionOf(row, d))].sort((a, b) => b[1].length - a[1].length)[0][0];

// ---- HTTP ----
async function get(path: string, query: Query = {}, headers: Record<string, string> = { Cookie: viewer.cookie }) {
  const res = await fetch(`${t.url}/api/sites/${site.id}${path}?${new URLSearchParams({ ...RANGE, ...query })}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { rows: unknown[]; message?: string; code?: string } };
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  const db = t.node.runtime.metadata();
  site = await createSite(db, { teamId: t.team.id, domain: 'events.example', timezone: TZ });
  rows = generate(site.id, t.otherSite.id);
  const analytics = t.node.runtime.analytics();
  const database = analytics.tenantDatabase(t.team.id);
  await analytics.insert('events', rows.map(({ at, visit: _, referrer, ...row }) => ({ ...row, ...referrerColumns(referrer), ts: new Date(at) })), { database });
  await analytics.insert('visits', visitRows(rows), { database });
  [viewer, stranger] = await Promise.all([person(t), person(t)]);
  const owner = await person(t, 'owner');
  await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, viewer.id, 'viewer']);
  tokens.read = (await createApiClient(db, { name: 'reader', scopes: ['stats:read'], sites: [{ siteId: site.id, role: 'viewer' }], ownerUserId: owner.id })).token;
  tokens.noScope = (await createApiClient(db, { name: 'ingest only', scopes: ['ingest:write'], sites: [{ siteId: site.id, role: 'owner' }], ownerUserId: owner.id })).token;
}, 60_000);

afterAll(() => t?.stop());

describe('the generated data', () => {
  it('has what the checks below rely on', () => {
    const visible = inRange();
    expect(visible.length).toBeGreaterThan(150);
    expect(rows.some((row) => row.site_id === site.id && (row.at < START || row.at >= END))).toBe(true);
    expect(rows.some((row) => row.site_id !== site.id && row.at >= START && row.at < END)).toBe(true);
    expect(new Set(visible.map((row) => row.path)).size).toBeGreaterThan(10);
    expect(new Set(visible.map((row) => row.country)).size).toBeGreaterThan(10);
    expect(visible.some((row) => row.name === 'signup' && row.props.plan === '')).toBe(true);
    expect(visible.some((row) => row.name === '$engagement')).toBe(true);
    // Visits decide the audience: each way an event's own origin can differ from its visit's occurs.
    for (const d of ['referrer', 'device', 'country'] as const) expect(visible.some((row) => row.visit && row.visit[d] !== row[d])).toBe(true);
    expect(visible.some((row) => !row.visit)).toBe(true);
    expect(visible.some((row) => row.visit && row.visit.start < START)).toBe(true);
    expect(visible.some((row) => row.visit?.states === 3)).toBe(true);
  });
});

describe('GET /api/sites/:id/events/names', () => {
  const expected = (list: Row[]) =>
    [...groups(list, (row) => (row.name.startsWith('$') ? undefined : row.name))]
      .map(([name, of]) => ({ name, unique_sessions: sessionsOf(of), events: of.length }))
      .sort((a, b) => b.unique_sessions - a.unique_sessions || b.events - a.events || byteOrder(a.name, b.name));

  it('lists custom event names, most unique sessions first; $-names and other sites are left out', async () => {
    const res = await get('/events/names');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rows: expected(inRange()) });
    expect(res.body.rows.map((row) => (row as { name: string }).name).sort()).toEqual(['download', 'purchase', 'share', 'signup']);
  });

  it('counts only the local days, or the RFC 3339 instants, asked for', async () => {
    expect((await get('/events/names', TWO_DAYS)).body).toEqual({ rows: expected(inRange(TWO_DAYS_START, TWO_DAYS_END)) });
    const instants = await get('/events/names', { from: '2026-03-08T12:00:00Z', to: '2026-03-09T00:00:00-05:00' });
    expect(instants.body).toEqual({ rows: expected(inRange(Date.parse('2026-03-08T12:00:00Z'), Date.parse('2026-03-09T05:00:00Z'))) });
  });

  it('defaults to the last 30 days without from and to', async () => {
    const res = await fetch(`${t.url}/api/sites/${site.id}/events/names`, { headers: { Cookie: viewer.cookie } });
    expect(res.status).toBe(200);
    expect(Array.isArray(((await res.json()) as { rows: unknown }).rows)).toBe(true);
  });

  it('answers an empty list for a range without events', async () => {
    expect((await get('/events/names', { from: '2025-01-01', to: '2025-01-31' })).body).toEqual({ rows: [] });
  });
});

describe('GET /api/sites/:id/events/properties', () => {
  it.each(['signup', 'purchase', 'download'])('lists the keys present on %s with the sessions that sent them', async (event) => {
    const of = inRange().filter((row) => row.name === event);
    const keys = [...new Set(of.flatMap((row) => Object.keys(row.props)))];
    const expected = keys
      .map((key) => ({ key, unique_sessions: sessionsOf(of.filter((row) => hasProp(row, key))) }))
      .sort((a, b) => b.unique_sessions - a.unique_sessions || byteOrder(a.key, b.key));
    const res = await get('/events/properties', { event_name: event });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rows: expected });
  });

  it('answers no keys for an event without properties, or one never sent', async () => {
    expect((await get('/events/properties', { event_name: 'share' })).body).toEqual({ rows: [] });
    expect((await get('/events/properties', { event_name: 'never-sent' })).body).toEqual({ rows: [] });
  });
});

describe('GET /api/sites/:id/events/breakdown', () => {
  const expected = (event: string, key: string) =>
    [...groups(inRange().filter((row) => row.name === event && hasProp(row, key)), (row) => row.props[key])]
      .map(([value, of]) => ({ value, unique_sessions: sessionsOf(of), events: of.length }))
      .sort((a, b) => b.unique_sessions - a.unique_sessions || byteOrder(a.value, b.value));

  it.each([
    ['signup', 'plan'],
    ['signup', 'source'],
    ['purchase', 'plan'],
    ['purchase', 'currency'],
    ['download', 'file'],
  ])('has one row per distinct value of %s.%s, most unique sessions first, then by value', async (event, key) => {
    const res = await get('/events/breakdown', { event_name: event, property_key: key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rows: expected(event, key) });
  });

  it('orders by unique sessions, not by events', async () => {
    const sessions = (await get('/events/breakdown', { event_name: 'signup', property_key: 'plan' })).body.rows.map((row) => (row as { unique_sessions: number }).unique_sessions);
    expect(sessions.length).toBeGreaterThan(2);
    expect(sessions).toEqual([...sessions].sort((a, b) => b - a));
  });

  it('keeps an empty value apart from a missing key, and text values exactly as sent', async () => {
    const plans = (await get('/events/breakdown', { event_name: 'signup', property_key: 'plan' })).body.rows as { value: string }[];
    expect(plans.map((row) => row.value)).toContain('');
    const files = (await get('/events/breakdown', { event_name: 'download', property_key: 'file' })).body.rows as { value: string }[];
    expect(files.map((row) => row.value)).toContain('report Q1 & “final”.pdf');
  });

  it('answers no rows for a key the event never carries', async () => {
    expect((await get('/events/breakdown', { event_name: 'share', property_key: 'plan' })).body).toEqual({ rows: [] });
  });
});

describe('filter combinations (timeseries and audience)', () => {
  const signups = () => inRange().filter((row) => row.name === 'signup');
  // No filter, the property filter alone, each dimension alone, and property AND each dimension.
  const combinations = (): Filters[] => [
    { event: 'signup' },
    { event: 'signup', property: ['plan', 'pro'] },
    { event: 'signup', property: ['plan', ''] },
    ...DIMENSIONS.map((d): Filters => ({ event: 'signup', dimension: [d, commonest(signups(), d)] })),
    ...DIMENSIONS.map((d): Filters => ({ event: 'signup', property: ['plan', 'pro'], dimension: [d, commonest(matching(signups(), { event: 'signup', property: ['plan', 'pro'] }), d)] })),
    { event: 'signup', dimension: ['referrer', ''] },
  ];
  const label = (f: Filters) => `${f.property ? `${f.property[0]}=${JSON.stringify(f.property[1])}` : 'no property'}, ${f.dimension ? `${f.dimension[0]}=${JSON.stringify(f.dimension[1])}` : 'no dimension'}`;

  it('timeseries: every combination matches the rows that pass all filters, per local day', async () => {
    const days = DAY_STARTS.map(Date.parse);
    for (const f of combinations()) {
      const res = await get('/events/timeseries', filterQuery(f));
      expect({ filters: label(f), status: res.status, body: res.body }).toEqual({
        filters: label(f),
        status: 200,
        body: { interval: 'day', rows: expectedSeries(matching(inRange(), f), days, END) },
      });
    }
  });

  it('audience: every combination gives the top 10 pages, referrers, devices and countries of matching sessions', async () => {
    for (const f of combinations()) {
      const res = await get('/events/audience', filterQuery(f));
      expect({ filters: label(f), status: res.status, body: res.body }).toEqual({ filters: label(f), status: 200, body: expectedAudience(matching(inRange(), f)) });
    }
  });

  it('filters combine with AND: both together select fewer sessions than either alone', async () => {
    const both: Filters = { event: 'signup', property: ['plan', 'pro'], dimension: ['device', 'desktop'] };
    const total = async (f: Filters) =>
      ((await get('/events/timeseries', filterQuery(f))).body.rows as { events: number }[]).reduce((sum, row) => sum + row.events, 0);
    const [property, dimension, together] = [await total({ ...both, dimension: undefined }), await total({ ...both, property: undefined }), await total(both)];
    expect(together).toBe(matching(inRange(), both).length);
    expect(together).toBeLessThan(Math.min(property, dimension));
    expect(together).toBeGreaterThan(0);
  });

  it('audience panels hold at most 10 rows each: a panel with more values is cut at 10', async () => {
    const res = await get('/events/audience', { event_name: 'download' });
    const body = res.body as unknown as Record<Dimension, unknown[]>;
    const downloads = matching(inRange(), { event: 'download' });
    for (const d of DIMENSIONS) expect({ d, rows: body[d].length }).toEqual({ d, rows: Math.min(10, new Set(downloads.map((row) => dimensionOf(row, d))).size) });
    expect(new Set(downloads.map((row) => row.path)).size).toBeGreaterThan(10);
    expect(body.path).toHaveLength(10);
  });
});

describe('GET /api/sites/:id/events/timeseries intervals', () => {
  const hours = (from: number, to: number) => Array.from({ length: (to - from) / 3_600_000 }, (_, i) => from + i * 3_600_000);

  it('uses hours for a range of up to two days: 47 across the spring-forward night, zero-filled', async () => {
    const res = await get('/events/timeseries', { event_name: 'download', ...TWO_DAYS });
    const starts = hours(TWO_DAYS_START, TWO_DAYS_END);
    expect(starts).toHaveLength(47);
    expect(res.body).toEqual({ interval: 'hour', rows: expectedSeries(matching(inRange(TWO_DAYS_START, TWO_DAYS_END), { event: 'download' }), starts, TWO_DAYS_END) });
    expect(res.body.rows.some((row) => (row as { events: number }).events === 0)).toBe(true);
  });

  it('uses days beyond two days, and every day of an empty range is there with zeros', async () => {
    const res = await get('/events/timeseries', { event_name: 'signup', from: '2026-04-01', to: '2026-04-03' });
    expect(res.body).toEqual({
      interval: 'day',
      rows: ['2026-04-01T04:00:00.000Z', '2026-04-02T04:00:00.000Z', '2026-04-03T04:00:00.000Z'].map((bucket) => ({ bucket, unique_sessions: 0, events: 0 })),
    });
  });

  it('honours an explicit interval: hour, day, week (from Monday) and month', async () => {
    const signup = matching(inRange(), { event: 'signup' });
    const cases: [string, number[]][] = [
      ['hour', hours(START, END)],
      ['day', DAY_STARTS.map(Date.parse)],
      ['week', ['2026-03-02T05:00:00.000Z', '2026-03-09T04:00:00.000Z'].map(Date.parse)],
      ['month', [Date.parse('2026-03-01T05:00:00.000Z')]],
    ];
    for (const [interval, starts] of cases) {
      const res = await get('/events/timeseries', { event_name: 'signup', interval });
      expect(res.body).toEqual({ interval, rows: expectedSeries(signup, starts, END) });
    }
  });
});

describe('parameter errors', () => {
  it.each(['/events/properties', '/events/breakdown', '/events/timeseries', '/events/audience'])('%s without event_name → 400', async (path) => {
    expect(await get(path, { property_key: 'plan' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/event_name/) } });
  });

  it.each(['/events/timeseries', '/events/audience'])('%s: a dimension_key outside path, referrer, device, country → 400 with a message', async (path) => {
    for (const key of ['browser', 'name', 'props', 'PATH', '']) {
      const res = await get(path, { event_name: 'signup', dimension_key: key, dimension_value: 'x' });
      expect({ key, status: res.status, code: res.body.code }).toEqual({ key, status: 400, code: 'validation_failed' });
      expect(res.body.message).toMatch(/dimension_key/);
    }
  });

  it.each([
    [{ property_value: 'pro' }, /property_key is required with property_value/],
    [{ property_key: 'plan' }, /property_value is required with property_key/],
    [{ dimension_value: 'mobile' }, /dimension_key is required with dimension_value/],
    [{ dimension_key: 'device' }, /dimension_value is required with dimension_key/],
  ])('a filter half without its other half (%o) → 400', async (query, message) => {
    for (const path of ['/events/timeseries', '/events/audience']) {
      const res = await get(path, { event_name: 'signup', ...query });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
    }
  });

  it('breakdown without property_key → 400', async () => {
    expect(await get('/events/breakdown', { event_name: 'signup' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/property_key/) } });
  });

  it.each([
    [{ from: '2026-13-01' }, /from must be/],
    [{ from: 'yesterday' }, /from must be/],
    [{ to: '2026-02-30' }, /to must be/],
    [{ from: '2026-03-10', to: '2026-03-01' }, /to must be after from/],
    [{ from: '2000-01-01', to: '2026-01-01' }, /at most/],
  ])('a bad range (%o) → 400 on every endpoint', async (range, message) => {
    for (const path of ['/events/names', '/events/properties', '/events/breakdown', '/events/timeseries', '/events/audience']) {
      const res = await get(path, { event_name: 'signup', property_key: 'plan', ...range });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.message).toMatch(message);
    }
  });

  it('an unknown interval, or too many hourly buckets → 400', async () => {
    expect((await get('/events/timeseries', { event_name: 'signup', interval: 'minute' })).status).toBe(400);
    const res = await get('/events/timeseries', { event_name: 'signup', interval: 'hour', from: '2025-01-01', to: '2025-12-31' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/buckets/);
  });
});

describe('who may read event analytics', () => {
  const paths: [string, Query][] = [
    ['/events/names', {}],
    ['/events/properties', { event_name: 'signup' }],
    ['/events/breakdown', { event_name: 'signup', property_key: 'plan' }],
    ['/events/timeseries', { event_name: 'signup' }],
    ['/events/audience', { event_name: 'signup' }],
  ];

  it('a site viewer, a stats:read token (bearer or X-API-Key) → 200', async () => {
    for (const [path, query] of paths) {
      const viewerRes = await get(path, query);
      const bearer = await get(path, query, { Authorization: `Bearer ${tokens.read}` });
      const apiKey = await get(path, query, { 'X-API-Key': tokens.read });
      expect({ path, statuses: [viewerRes.status, bearer.status, apiKey.status] }).toEqual({ path, statuses: [200, 200, 200] });
      expect(bearer.body).toEqual(viewerRes.body);
    }
  });

  it('no credentials → 401, a non-member → 404, a token without stats:read → 403', async () => {
    for (const [path, query] of paths) {
      const anonymous = await get(path, query, {});
      const outsider = await get(path, query, { Cookie: stranger.cookie });
      const noScope = await get(path, query, { Authorization: `Bearer ${tokens.noScope}` });
      expect({ path, statuses: [anonymous.status, outsider.status, noScope.status] }).toEqual({ path, statuses: [401, 404, 403] });
    }
  });

  it('a viewer of one site reads nothing of another site', async () => {
    expect((await fetch(`${t.url}/api/sites/${t.otherSite.id}/events/names`, { headers: { Cookie: viewer.cookie } })).status).toBe(404);
  });
});
