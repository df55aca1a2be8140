// Funnels through a real node: CRUD with exact bodies and validation (2–8 steps, window bounds,
// strict fields), who may do what, and step stats against a reference computed here: steps in
// order vs out of order vs outside the window, over pageviews and custom events together.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let editor: Person;
let viewer: Person;
let outsider: Person;

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const db = () => t.node.runtime.metadata();
const funnelsOf = (siteId: string) => `/api/sites/${siteId}/funnels`;
const pathStep = (path_pattern: string) => ({ type: 'path', path_pattern });

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  [editor, viewer, outsider] = await Promise.all([person(t), person(t), person(t)]);
  await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'editor')", [t.site.id, editor.id]);
  await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [t.site.id, viewer.id]);
}, 60_000);

afterAll(() => t.stop());

describe('funnels CRUD', () => {
  let funnelId: string;
  const steps = [{ type: 'path', path_pattern: '/pricing', label: 'Pricing' }, pathStep('/signup/*'), { type: 'event', event_name: 'Signup' }];

  it('POST creates a funnel with the default one-day window', async () => {
    const res = await as(t, editor, 'POST', funnelsOf(t.site.id), { name: 'Signup flow', steps });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ funnel: { id: UUID, site_id: t.site.id, name: 'Signup flow', steps, window_seconds: 86_400, created_at: ISO } });
    funnelId = (res.body.funnel as { id: string }).id;
    const audit = await db().query<{ details: string; site_id: string; subject_id: string }>("SELECT details, site_id, subject_id FROM audit_log WHERE team_id = $1 AND action = 'funnel.created'", [t.team.id]);
    expect(audit.rows).toEqual([{ details: 'funnel "Signup flow" on example.com', site_id: t.site.id, subject_id: funnelId }]);
  });

  it('GET lists and reads funnels for viewers', async () => {
    const list = await as(t, viewer, 'GET', funnelsOf(t.site.id));
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [expect.objectContaining({ id: funnelId, name: 'Signup flow' })], total: 1, limit: 25, offset: 0, has_more: false });
    expect((await as(t, viewer, 'GET', `${funnelsOf(t.site.id)}/${funnelId}`)).body).toEqual({ funnel: (list.body.items as unknown[])[0] });
  });

  it('PATCH replaces the steps and changes the window', async () => {
    const res = await as(t, editor, 'PATCH', `${funnelsOf(t.site.id)}/${funnelId}`, { steps: [pathStep('/a'), pathStep('/b')], window_seconds: 600 });
    expect(res.status).toBe(200);
    expect(res.body.funnel).toEqual({ id: funnelId, site_id: t.site.id, name: 'Signup flow', steps: [pathStep('/a'), pathStep('/b')], window_seconds: 600, created_at: ISO });
  });

  it('DELETE removes it (204); afterwards it is 404', async () => {
    expect((await as(t, editor, 'DELETE', `${funnelsOf(t.site.id)}/${funnelId}`)).status).toBe(204);
    expect((await as(t, editor, 'GET', `${funnelsOf(t.site.id)}/${funnelId}`)).status).toBe(404);
    expect((await as(t, editor, 'GET', `${funnelsOf(t.site.id)}/${funnelId}/stats`)).status).toBe(404);
  });
});

describe('funnel validation', () => {
  const nine = Array.from({ length: 9 }, (_, i) => pathStep(`/step-${i}`));
  it.each([
    ['1 step', { name: 'v1', steps: [pathStep('/a')] }],
    ['9 steps', { name: 'v2', steps: nine }],
    ['no steps', { name: 'v3' }],
    ['an event step without event_name', { name: 'v4', steps: [pathStep('/a'), { type: 'event' }] }],
    ['a path step with event_name', { name: 'v5', steps: [pathStep('/a'), { type: 'path', path_pattern: '/b', event_name: 'E' }] }],
    ['an unknown step type', { name: 'v6', steps: [pathStep('/a'), { type: 'click', path_pattern: '/b' }] }],
    ['an unknown field in a step', { name: 'v7', steps: [pathStep('/a'), { ...pathStep('/b'), colour: 'red' }] }],
    ['an unknown field', { name: 'v8', steps: [pathStep('/a'), pathStep('/b')], colour: 'red' }],
    ['a window under a minute', { name: 'v9', steps: [pathStep('/a'), pathStep('/b')], window_seconds: 59 }],
    ['a window over 30 days', { name: 'v10', steps: [pathStep('/a'), pathStep('/b')], window_seconds: 2_592_001 }],
    ['a relative path', { name: 'v11', steps: [pathStep('a'), pathStep('/b')] }],
  ])('refuses %s (400)', async (_what, body) => {
    const res = await as(t, editor, 'POST', funnelsOf(t.site.id), body);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'validation_failed' });
  });

  it('accepts 8 steps and the window bounds', async () => {
    const eight = nine.slice(0, 8);
    expect((await as(t, editor, 'POST', funnelsOf(t.site.id), { name: 'eight', steps: eight, window_seconds: 60 })).status).toBe(201);
    expect((await as(t, editor, 'POST', funnelsOf(t.site.id), { name: 'month', steps: eight.slice(0, 2), window_seconds: 2_592_000 })).status).toBe(201);
  });

  it('refuses a duplicate name on the site (409)', async () => {
    const res = await as(t, editor, 'POST', funnelsOf(t.site.id), { name: 'eight', steps: [pathStep('/a'), pathStep('/b')] });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 409, code: 'conflict' });
  });
});

describe('who may manage funnels', () => {
  const body = { name: 'Roles', steps: [pathStep('/a'), pathStep('/b')] };

  it('a viewer reads but cannot create (403); a non-member gets 404; a token cannot create', async () => {
    expect((await as(t, viewer, 'GET', funnelsOf(t.site.id))).status).toBe(200);
    expect((await as(t, viewer, 'POST', funnelsOf(t.site.id), body)).status).toBe(403);
    expect((await as(t, outsider, 'GET', funnelsOf(t.site.id))).status).toBe(404);
    const token = (await createApiClient(db(), { name: 'reader', scopes: ['stats:read'], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: editor.id })).token;
    const res = await fetch(`${t.url}${funnelsOf(t.site.id)}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(403);
  });
});

describe('GET /api/sites/:id/funnels/:funnelId/stats', () => {
  let site: Site;
  let funnelId: string;
  const DAY = '2026-04-02';
  const WINDOW_SECONDS = 3600;
  const steps = [
    { type: 'path', path_pattern: '/landing', label: 'Landing' },
    { type: 'path', path_pattern: '/pricing/*' },
    { type: 'event', event_name: 'Signup' },
  ];
  // [visitor, kind, path or event name, seconds after 08:00 on DAY]
  type Row = [string, 'hit' | 'event', string, number];
  const rows: Row[] = [
    // In order within the window: all three steps.
    ['1', 'hit', '/landing', 0],
    ['1', 'hit', '/about', 5],
    ['1', 'hit', '/pricing/team', 10],
    ['1', 'event', 'Signup', 20],
    // Out of order: pricing and signup before the landing page.
    ['2', 'hit', '/pricing/team', 0],
    ['2', 'event', 'Signup', 5],
    ['2', 'hit', '/landing', 10],
    // Step 2 outside the window (two hours later).
    ['3', 'hit', '/landing', 0],
    ['3', 'hit', '/pricing/solo', 7200],
    ['3', 'event', 'Signup', 7210],
    // Two steps in order, then gone.
    ['4', 'hit', '/landing', 0],
    ['4', 'hit', '/pricing/team', 30],
    // A repeated first step restarts the window: the second visit goes all the way.
    ['5', 'hit', '/landing', 0],
    ['5', 'hit', '/landing', 10_000],
    ['5', 'hit', '/pricing/team', 10_030],
    ['5', 'event', 'Signup', 10_040],
    // Landing and signup, skipping pricing: step 1 only.
    ['6', 'hit', '/landing', 0],
    ['6', 'event', 'Signup', 60],
    // Nothing the funnel knows.
    ['7', 'hit', '/about', 0],
    // /pricing alone is not /pricing/*.
    ['8', 'hit', '/landing', 0],
    ['8', 'hit', '/pricing', 10],
    // Two steps in the same instant are not in order: step 1 only.
    ['9', 'hit', '/landing', 50],
    ['9', 'hit', '/pricing/team', 50],
  ];

  /** The furthest step each visitor reaches: for every step-1 row, the earliest later row of each next step within the window. */
  function referenceLevels(): Map<string, number> {
    const matches = (step: (typeof steps)[number], row: Row) =>
      step.type === 'event' ? row[1] === 'event' && row[2] === step.event_name : row[1] === 'hit' && (step.path_pattern === '/pricing/*' ? row[2].startsWith('/pricing/') : row[2] === step.path_pattern);
    const levels = new Map<string, number>();
    for (const visitor of new Set(rows.map((r) => r[0]))) {
      const own = rows.filter((r) => r[0] === visitor).sort((a, b) => a[3] - b[3]);
      let best = 0;
      for (const start of own.filter((r) => matches(steps[0], r))) {
        let level = 1;
        let last = start[3];
        for (const step of steps.slice(1)) {
          const next = own.find((r) => r[3] > last && r[3] <= start[3] + WINDOW_SECONDS && matches(step, r));
          if (!next) break;
          level++;
          last = next[3];
        }
        best = Math.max(best, level);
      }
      levels.set(visitor, best);
    }
    return levels;
  }

  beforeAll(async () => {
    site = await createSite(db(), { teamId: t.team.id, domain: 'funnel-stats.example' });
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'editor')", [site.id, editor.id]);
    const res = await as(t, editor, 'POST', funnelsOf(site.id), { name: 'Signup', steps, window_seconds: WINDOW_SECONDS });
    funnelId = (res.body.funnel as { id: string }).id;
    const analytics = t.node.runtime.analytics();
    const database = analytics.tenantDatabase(t.team.id);
    const ts = (seconds: number) => new Date(Date.parse(`${DAY}T08:00:00Z`) + seconds * 1000).toISOString();
    const common = (row: Row) => ({ ts: ts(row[3]), site_id: site.id, visitor_id: row[0], session_id: row[0] });
    await analytics.insert('hits', rows.filter((r) => r[1] === 'hit').map((r) => ({ ...common(r), hit_id: crypto.randomUUID(), path: r[2] })), { database });
    await analytics.insert('events', rows.filter((r) => r[1] === 'event').map((r) => ({ ...common(r), event_id: crypto.randomUUID(), name: r[2], path: '/x', props: {} })), { database });
  });

  it('counts visitors per step in order within the window, with drop-off and rates', async () => {
    const res = await as(t, editor, 'GET', `${funnelsOf(site.id)}/${funnelId}/stats?from=${DAY}&to=${DAY}`);
    expect(res.status).toBe(200);
    const levels = [...referenceLevels().values()];
    const reached = [1, 2, 3].map((step) => levels.filter((level) => level >= step).length);
    const pct = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 1000) / 10);
    expect(res.body).toEqual({
      funnel: { id: funnelId, name: 'Signup' },
      steps: [
        { index: 1, label: 'Landing', visitors: reached[0], dropoff: 0, conversion_rate: pct(reached[0], reached[0]), step_conversion_rate: pct(reached[0], reached[0]) },
        { index: 2, label: '/pricing/*', visitors: reached[1], dropoff: reached[0] - reached[1], conversion_rate: pct(reached[1], reached[0]), step_conversion_rate: pct(reached[1], reached[0]) },
        { index: 3, label: 'Signup', visitors: reached[2], dropoff: reached[1] - reached[2], conversion_rate: pct(reached[2], reached[0]), step_conversion_rate: pct(reached[2], reached[1]) },
      ],
    });
    // Written out: visitors 1–6, 8 and 9 land (8); 1, 4 and 5 reach pricing (3); 1 and 5 sign up (2).
    expect(reached).toEqual([8, 3, 2]);
    expect((res.body.steps as { conversion_rate: number; step_conversion_rate: number }[]).map((s) => [s.conversion_rate, s.step_conversion_rate])).toEqual([
      [100, 100],
      [37.5, 37.5],
      [25, 66.7],
    ]);
  });

  it('counts nothing outside the date range', async () => {
    const res = await as(t, editor, 'GET', `${funnelsOf(site.id)}/${funnelId}/stats?from=2026-04-03&to=2026-04-03`);
    expect((res.body.steps as { visitors: number }[]).map((s) => s.visitors)).toEqual([0, 0, 0]);
  });

  it('is 404 for another site’s funnel id and for outsiders', async () => {
    expect((await as(t, editor, 'GET', `${funnelsOf(t.site.id)}/${funnelId}/stats`)).status).toBe(404);
    expect((await as(t, outsider, 'GET', `${funnelsOf(site.id)}/${funnelId}/stats`)).status).toBe(404);
  });
});
