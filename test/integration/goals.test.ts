// Goals through a real node: CRUD with exact bodies and validation, who may do what, audit entries
// and ops events, conversions in stats against counts computed here from the inserted rows, and
// goal.converted announced once per visit and goal as events flow through the real ingest path.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'moleculer';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { as, type Person, person, withToken } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let editor: Person;
let viewer: Person;
let outsider: Person;
let readToken: string;
let noScopeToken: string;
let ingestToken: string;
const ops: { type: string; data: Record<string, unknown> }[] = [];
const converted: Record<string, unknown>[] = [];
const storedBatches: unknown[][] = [];

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const db = () => t.node.runtime.metadata();
const goalsOf = (siteId: string) => `/api/sites/${siteId}/goals`;


beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000', PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000' });
  [editor, viewer, outsider] = await Promise.all([person(t), person(t), person(t)]);
  await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'editor')", [t.site.id, editor.id]);
  await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [t.site.id, viewer.id]);
  readToken = (await createApiClient(db(), { name: 'reader', scopes: ['stats:read'], sites: [{ siteId: t.site.id, role: 'editor' }], ownerUserId: editor.id })).token;
  noScopeToken = (await createApiClient(db(), { name: 'no scope', scopes: [], sites: [{ siteId: t.site.id, role: 'editor' }], ownerUserId: editor.id })).token;
  ingestToken = await t.token(['ingest:write']);
  await t.node.broker.createService({
    name: 'goals-spy',
    events: {
      'ops.goal.*'(ctx: Context<Record<string, unknown>>) {
        ops.push({ type: ctx.eventName!, data: ctx.params });
      },
      'goal.converted'(ctx: Context<Record<string, unknown>>) {
        converted.push(ctx.params);
      },
      'ingest.batch.stored'(ctx: Context<{ records: unknown[] }>) {
        storedBatches.push(ctx.params.records);
      },
    },
  });
}, 60_000);

afterAll(() => t.stop());

describe('goals CRUD', () => {
  let goalId: string;

  it('POST creates an event goal with property conditions and revenue', async () => {
    const res = await as(t, editor, 'POST', goalsOf(t.site.id), {
      name: ' Pro signup ',
      type: 'event',
      event_name: 'Signup',
      property_conditions: [{ key: 'plan', value: 'pro' }],
      revenue: { currency: 'eur' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      goal: { id: UUID, site_id: t.site.id, name: 'Pro signup', type: 'event', event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }], revenue: { currency: 'EUR' }, created_at: ISO },
    });
    goalId = (res.body.goal as { id: string }).id;
    expect(ops.at(-1)).toEqual({ type: 'ops.goal.created', data: { site_id: t.site.id, goal_id: goalId, name: 'Pro signup', type: 'event' } });
    const audit = await db().query<{ actor_email: string; details: string; site_id: string; subject_id: string }>(
      "SELECT actor_email, details, site_id, subject_id FROM audit_log WHERE team_id = $1 AND action = 'goal.created'",
      [t.team.id],
    );
    expect(audit.rows).toEqual([{ actor_email: editor.email, details: 'goal "Pro signup" on example.com', site_id: t.site.id, subject_id: goalId }]);
  });

  it('POST creates a wildcard path goal', async () => {
    const res = await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Read the blog', type: 'path', path_pattern: '/blog/*' });
    expect(res.status).toBe(201);
    expect(res.body.goal).toEqual({ id: UUID, site_id: t.site.id, name: 'Read the blog', type: 'path', path_pattern: '/blog/*', created_at: ISO });
  });

  it('GET lists the goals oldest first, for viewers and stats:read tokens', async () => {
    const byViewer = await as(t, viewer, 'GET', goalsOf(t.site.id));
    expect(byViewer.status).toBe(200);
    expect(byViewer.body).toMatchObject({ total: 2, limit: 25, offset: 0, has_more: false });
    expect((byViewer.body.items as { name: string }[]).map((g) => g.name)).toEqual(['Pro signup', 'Read the blog']);
    const byToken = await withToken(t, readToken, 'GET', goalsOf(t.site.id));
    expect(byToken.body).toEqual(byViewer.body);
  });

  it('GET /:goalId reads one goal; another site’s goal id is 404', async () => {
    expect((await as(t, viewer, 'GET', `${goalsOf(t.site.id)}/${goalId}`)).body).toMatchObject({ goal: { id: goalId, name: 'Pro signup' } });
    const elsewhere = await as(t, editor, 'GET', `${goalsOf(t.otherSite.id)}/${goalId}`);
    expect(elsewhere.status).toBe(404);
  });

  it('PATCH changes fields; null clears revenue; a change of type needs the new matcher', async () => {
    const renamed = await as(t, editor, 'PATCH', `${goalsOf(t.site.id)}/${goalId}`, { name: 'Pro plan signup', revenue: null });
    expect(renamed.status).toBe(200);
    expect(renamed.body.goal).toEqual({ id: goalId, site_id: t.site.id, name: 'Pro plan signup', type: 'event', event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }], created_at: ISO });
    expect(ops.at(-1)).toEqual({ type: 'ops.goal.updated', data: { site_id: t.site.id, goal_id: goalId, name: 'Pro plan signup', type: 'event' } });

    const noMatcher = await as(t, editor, 'PATCH', `${goalsOf(t.site.id)}/${goalId}`, { type: 'path' });
    expect({ status: noMatcher.status, code: noMatcher.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const toPath = await as(t, editor, 'PATCH', `${goalsOf(t.site.id)}/${goalId}`, { type: 'path', path_pattern: '/signed-up' });
    expect(toPath.body.goal).toEqual({ id: goalId, site_id: t.site.id, name: 'Pro plan signup', type: 'path', path_pattern: '/signed-up', created_at: ISO });
  });

  it('PATCH without a change announces nothing', async () => {
    const before = ops.length;
    const res = await as(t, editor, 'PATCH', `${goalsOf(t.site.id)}/${goalId}`, { path_pattern: '/signed-up' });
    expect(res.status).toBe(200);
    expect(ops.length).toBe(before);
  });

  it('DELETE removes the goal (204), announces it, and it is gone', async () => {
    const res = await as(t, editor, 'DELETE', `${goalsOf(t.site.id)}/${goalId}`);
    expect(res.status).toBe(204);
    expect(ops.at(-1)).toEqual({ type: 'ops.goal.deleted', data: { site_id: t.site.id, goal_id: goalId, name: 'Pro plan signup', type: 'path' } });
    expect((await as(t, editor, 'GET', `${goalsOf(t.site.id)}/${goalId}`)).status).toBe(404);
    expect((await as(t, editor, 'DELETE', `${goalsOf(t.site.id)}/${goalId}`)).status).toBe(404);
  });
});

describe('goal validation', () => {
  it.each([
    ['an unknown field', { name: 'x1', type: 'path', path_pattern: '/a', colour: 'red' }, 'colour'],
    ['an unknown field in a condition', { name: 'x2', type: 'event', event_name: 'E', property_conditions: [{ key: 'a', value: 'b', op: 'is' }] }, 'property_conditions[0].op'],
    ['a bad type', { name: 'x3', type: 'click', path_pattern: '/a' }, 'type'],
    ['an event goal without event_name', { name: 'x4', type: 'event' }, 'event_name'],
    ['a path goal without path_pattern', { name: 'x5', type: 'path' }, 'path_pattern'],
    ['a path goal with event_name', { name: 'x6', type: 'path', path_pattern: '/a', event_name: 'E' }, 'event_name'],
    ['a relative path pattern', { name: 'x7', type: 'path', path_pattern: 'blog/*' }, 'path_pattern'],
    ['a reserved event name', { name: 'x8', type: 'event', event_name: '$engagement' }, 'event_name'],
    ['11 property conditions', { name: 'x9', type: 'event', event_name: 'E', property_conditions: Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }, 'property_conditions'],
    ['a repeated condition key', { name: 'x10', type: 'event', event_name: 'E', property_conditions: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }] }, 'property_conditions'],
    ['an unknown currency', { name: 'x11', type: 'event', event_name: 'E', revenue: { currency: 'XYZ' } }, 'revenue.currency'],
    ['revenue on a path goal', { name: 'x12', type: 'path', path_pattern: '/a', revenue: { currency: 'USD' } }, 'revenue'],
    ['a name of 121 characters', { name: 'n'.repeat(121), type: 'path', path_pattern: '/a' }, 'name'],
  ])('refuses %s (400, naming the field)', async (_what, body, field) => {
    const res = await as(t, editor, 'POST', goalsOf(t.site.id), body);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    // An unknown key is named by its own path.
    const fields = res.body.fields as { field: string; message: string }[];
    expect(fields.map((f) => f.field)).toContain(field);
  });

  it('refuses a duplicate name on the same site (409), on create and on rename, but not on another site', async () => {
    const first = await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Contact', type: 'path', path_pattern: '/contact' });
    expect(first.status).toBe(201);
    const again = await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Contact', type: 'event', event_name: 'Contact' });
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: 'conflict' });
    const other = await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Contact 2', type: 'path', path_pattern: '/contact-2' });
    const rename = await as(t, editor, 'PATCH', `${goalsOf(t.site.id)}/${(other.body.goal as { id: string }).id}`, { name: 'Contact' });
    expect(rename.status).toBe(409);
    const owner = await person(t, 'owner');
    expect((await as(t, owner, 'POST', goalsOf(t.otherSite.id), { name: 'Contact', type: 'path', path_pattern: '/contact' })).status).toBe(201);
  });
});

describe('who may manage goals', () => {
  const body = { name: 'Role check', type: 'path', path_pattern: '/roles' };

  it('a viewer reads but cannot create (403)', async () => {
    expect((await as(t, viewer, 'GET', goalsOf(t.site.id))).status).toBe(200);
    const res = await as(t, viewer, 'POST', goalsOf(t.site.id), body);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'forbidden' });
  });

  it('a non-member gets 404 for reading and changing', async () => {
    expect((await as(t, outsider, 'GET', goalsOf(t.site.id))).status).toBe(404);
    expect((await as(t, outsider, 'POST', goalsOf(t.site.id), body)).status).toBe(404);
    expect((await as(t, outsider, 'GET', `${goalsOf(t.site.id)}/stats`)).status).toBe(404);
  });

  it('nobody signed in gets 401', async () => {
    expect((await as(t, undefined, 'GET', goalsOf(t.site.id))).status).toBe(401);
  });

  it('an API token reads with stats:read but can never change goals (403)', async () => {
    expect((await withToken(t, noScopeToken, 'GET', goalsOf(t.site.id))).status).toBe(403);
    const res = await withToken(t, readToken, 'POST', goalsOf(t.site.id), body);
    expect(res.status).toBe(403);
  });

  it('an editor creates', async () => {
    expect((await as(t, editor, 'POST', goalsOf(t.site.id), body)).status).toBe(201);
  });
});

describe('GET /api/sites/:id/goals/stats', () => {
  let site: Site;
  const DAY = '2026-03-10';
  // [visitor, session, path, time of day]
  const hits: [string, string, string, string][] = [
    ['101', '1', '/', '08:00:00'],
    ['101', '1', '/pricing', '08:01:00'],
    ['101', '1', '/blog/one', '08:02:00'],
    ['102', '2', '/blog/two', '09:00:00'],
    ['102', '2', '/blog/two', '09:05:00'],
    ['103', '3', '/pricing', '10:00:00'],
    ['103', '4', '/pricing', '18:00:00'],
    ['104', '5', '/blog', '11:00:00'],
    ['105', '6', '/saleX50', '12:00:00'],
    ['106', '7', '/sale_50', '13:00:00'],
  ];
  // [visitor, session, name, props, revenue, time of day]
  const events: [string, string, string, Record<string, string>, string | null, string][] = [
    ['101', '1', 'Signup', { plan: 'pro' }, '49.99', '08:03:00'],
    ['102', '2', 'Signup', { plan: 'free' }, null, '09:06:00'],
    ['103', '3', 'Signup', { plan: 'pro', period: 'yearly' }, '99', '10:01:00'],
    ['103', '4', 'Signup', { plan: 'pro' }, '10', '18:01:00'],
    ['107', '8', 'Download', {}, null, '14:00:00'],
  ];
  // The next day: outside the range asked for.
  const outside = { hit: ['108', '9', '/pricing', '00:00:01'], event: ['108', '9', 'Signup', { plan: 'pro' }, '500', '00:00:02'] } as const;

  type Row = { path?: string; name?: string; props?: Record<string, string> };
  // Each goal with the same rule as a plain predicate, written independently of the product's matcher.
  const goals: { body: { name: string; type: string; revenue?: { currency: string } } & Record<string, unknown>; matches: (row: Row) => boolean }[] = [
    { body: { name: 'Pricing', type: 'path', path_pattern: '/pricing' }, matches: (r) => r.path === '/pricing' },
    { body: { name: 'Blog', type: 'path', path_pattern: '/blog/*' }, matches: (r) => r.path?.startsWith('/blog/') === true },
    { body: { name: 'Sale', type: 'path', path_pattern: '/sale_50' }, matches: (r) => r.path === '/sale_50' },
    {
      body: { name: 'Pro signup', type: 'event', event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }], revenue: { currency: 'USD' } },
      matches: (r) => r.name === 'Signup' && r.props?.plan === 'pro',
    },
    { body: { name: 'Any signup', type: 'event', event_name: 'Signup' }, matches: (r) => r.name === 'Signup' },
    { body: { name: 'Never', type: 'event', event_name: 'Never' }, matches: (r) => r.name === 'Never' },
  ];

  beforeAll(async () => {
    site = await createSite(db(), { teamId: t.team.id, domain: 'stats-goals.example' });
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'editor')", [site.id, editor.id]);
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [site.id, viewer.id]);
    for (const goal of goals) expect((await as(t, editor, 'POST', goalsOf(site.id), goal.body)).status).toBe(201);
    const analytics = t.node.runtime.analytics();
    const database = analytics.tenantDatabase(t.team.id);
    const hitRow = ([visitor, session, path, time]: readonly string[], day = DAY) => ({ ts: `${day}T${time}.000Z`, site_id: site.id, visitor_id: visitor, session_id: session, hit_id: crypto.randomUUID(), path });
    const eventRow = ([visitor, session, name, props, revenue, time]: readonly [string, string, string, Record<string, string>, string | null, string], day = DAY) => ({
      ts: `${day}T${time}.000Z`,
      site_id: site.id,
      visitor_id: visitor,
      session_id: session,
      event_id: crypto.randomUUID(),
      name,
      props,
      revenue,
    });
    await analytics.insert('hits', [...hits.map((h) => hitRow(h)), hitRow(outside.hit, '2026-03-11')], { database });
    await analytics.insert('events', [...events.map((e) => eventRow(e)), eventRow(outside.event, '2026-03-11')], { database });
  });

  it('counts unique converting visitors, matching rows, the rate of the range’s visitors and revenue', async () => {
    const res = await as(t, viewer, 'GET', `${goalsOf(site.id)}/stats?from=${DAY}&to=${DAY}`);
    expect(res.status).toBe(200);

    const rows = [...hits.map(([visitor, , path]) => ({ visitor, path })), ...events.map(([visitor, , name, props, revenue]) => ({ visitor, name, props, revenue }))];
    const visitors = new Set(rows.map((r) => r.visitor)).size;
    const expected = goals.map(({ body: goal, matches }) => {
      const matching = rows.filter(matches);
      const conversions = new Set(matching.map((r) => r.visitor)).size;
      const row: Record<string, unknown> = {
        goal_id: UUID,
        name: goal.name,
        type: goal.type,
        conversions,
        events: matching.length,
        conversion_rate: Math.round((conversions / visitors) * 1000) / 10,
      };
      if (goal.revenue) row.revenue = { currency: 'USD', total: matching.reduce((sum, r) => sum + Number((r as { revenue?: string }).revenue ?? 0), 0) };
      return row;
    });
    expected.sort((a, b) => (b.conversions as number) - (a.conversions as number) || String(a.name).localeCompare(String(b.name)));
    expect(res.body).toEqual({ rows: expected });
    // The same figures written out, as a check on the computation above: 7 visitors in the range.
    const byName = Object.fromEntries((res.body.rows as { name: string }[]).map((r) => [r.name, r]));
    expect(byName.Pricing).toMatchObject({ conversions: 2, events: 3, conversion_rate: 28.6 });
    expect(byName.Blog).toMatchObject({ conversions: 2, events: 3, conversion_rate: 28.6 });
    expect(byName.Sale).toMatchObject({ conversions: 1, events: 1, conversion_rate: 14.3 });
    expect(byName['Pro signup']).toMatchObject({ conversions: 2, events: 3, conversion_rate: 28.6, revenue: { currency: 'USD', total: 158.99 } });
    expect(byName['Any signup']).toMatchObject({ conversions: 3, events: 4, conversion_rate: 42.9 });
    expect(byName.Never).toMatchObject({ conversions: 0, events: 0, conversion_rate: 0 });
  });

  it('answers stats:read tokens and refuses a malformed range (400)', async () => {
    const token = (await createApiClient(db(), { name: 'stats', scopes: ['stats:read'], sites: [{ siteId: site.id, role: 'viewer' }], ownerUserId: editor.id })).token;
    expect((await withToken(t, token, 'GET', `${goalsOf(site.id)}/stats?from=${DAY}&to=${DAY}`)).status).toBe(200);
    expect((await as(t, viewer, 'GET', `${goalsOf(site.id)}/stats?from=10-03-2026`)).status).toBe(400);
  });
});

/** UUIDv5 (RFC 9562) written out here, so the ids are checked without the product's code. */
function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replaceAll('-', ''), 'hex')).update(name).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}

describe('goal.converted', () => {
  let welcome: { id: string };
  let purchase: { id: string };
  let marker: { id: string };
  const base = Date.now() - 120_000;
  const at = (second: number) => new Date(base + second * 1000).toISOString();
  const item = (path: string, session: string, second: number) => ({
    url: `https://example.com${path}`,
    timestamp: at(second),
    visitor_ip: '193.0.6.139',
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    session_id: session,
  });
  const post = (kind: 'pageview' | 'event', body: unknown) => withToken(t, ingestToken, 'POST', `/api/ingest/server/${kind}`, body);
  const conversionsBesidesMarkers = () => converted.filter((c) => c.goal_id !== marker.id);

  /**
   * Sends a pageview that converts the marker goal in a visit of its own, and waits for that
   * conversion. Batches are judged in the order they are stored, so by then every conversion of
   * what came before has been announced: a count checked after this cannot pass merely because
   * the judging is slow.
   */
  async function judgedThrough(second: number) {
    expect((await post('pageview', item('/marker', `marker-${second}`, second))).status).toBe(202);
    await waitFor(async () => converted.some((c) => c.goal_id === marker.id && c.converted_at === at(second)), 10_000, () => `expected the marker conversion at second ${second}`);
  }

  beforeAll(async () => {
    welcome = (await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Welcome tour', type: 'path', path_pattern: '/welcome/*' })).body.goal as { id: string };
    purchase = (await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Team purchase', type: 'event', event_name: 'Purchase', property_conditions: [{ key: 'plan', value: 'team' }] })).body
      .goal as { id: string };
    marker = (await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Marker', type: 'path', path_pattern: '/marker' })).body.goal as { id: string };
  });

  it('is emitted once per visit and goal for events stored through the ingest path', async () => {
    expect((await post('pageview', item('/welcome/a', 'visit-1', 1))).status).toBe(202);
    expect((await post('pageview', item('/welcome/b', 'visit-1', 2))).status).toBe(202);
    expect((await post('event', { ...item('/checkout', 'visit-1', 3), name: 'Purchase', properties: { plan: 'team' } })).status).toBe(202);
    expect((await post('event', { ...item('/checkout', 'visit-1', 4), name: 'Purchase', properties: { plan: 'team' } })).status).toBe(202);
    expect((await post('event', { ...item('/checkout', 'visit-2', 5), name: 'Purchase', properties: { plan: 'solo' } })).status).toBe(202);
    expect((await post('pageview', item('/welcome/c', 'visit-2', 6))).status).toBe(202);

    const stored = await t.rows<{ hit_id: string; path: string }>('hits', 3, "path LIKE '/welcome/%'");
    const purchases = await t.rows<{ event_id: string; props: Record<string, string> }>('events', 3, "name = 'Purchase'");
    await judgedThrough(8);

    const firstWelcome = stored.find((h) => h.path === '/welcome/a')!;
    const laterWelcome = stored.find((h) => h.path === '/welcome/c')!;
    const firstPurchase = purchases.filter((e) => e.props.plan === 'team')[0];
    const NS = '233daefc-fce6-4caf-be1f-a0214e603a22';
    const expected = [
      { event_id: uuidV5(NS, `${firstWelcome.hit_id}:${welcome.id}`), site_id: t.site.id, goal_id: welcome.id, goal_name: 'Welcome tour', goal_type: 'path', converted_at: at(1) },
      { event_id: uuidV5(NS, `${firstPurchase.event_id}:${purchase.id}`), site_id: t.site.id, goal_id: purchase.id, goal_name: 'Team purchase', goal_type: 'event', converted_at: at(3) },
      { event_id: uuidV5(NS, `${laterWelcome.hit_id}:${welcome.id}`), site_id: t.site.id, goal_id: welcome.id, goal_name: 'Welcome tour', goal_type: 'path', converted_at: at(6) },
    ];
    const byTime = conversionsBesidesMarkers().sort((a, b) => String(a.converted_at).localeCompare(String(b.converted_at)));
    expect(byTime).toEqual(expected);
  });

  it('is not emitted again when a stored batch is announced a second time (a replay)', async () => {
    const before = conversionsBesidesMarkers().length;
    expect(storedBatches.length).toBeGreaterThan(0);
    // A copy: the spy hears these announcements too and appends them.
    for (const records of [...storedBatches]) await t.node.broker.broadcastLocal('ingest.batch.stored', { records });
    await judgedThrough(9);
    expect(conversionsBesidesMarkers().length).toBe(before);
  });

  it('follows goal changes at once: a new goal converts on the next batch', async () => {
    const later = (await as(t, editor, 'POST', goalsOf(t.site.id), { name: 'Docs', type: 'path', path_pattern: '/docs' })).body.goal as { id: string };
    expect((await post('pageview', item('/docs', 'visit-1', 7))).status).toBe(202);
    await waitFor(async () => converted.some((c) => c.goal_id === later.id), 10_000, () => 'expected a conversion on the new goal');
    expect(converted.filter((c) => c.goal_id === later.id)).toHaveLength(1);
  });
});
