// The search-console plugin end to end against a local double of Google (OAuth and Search Console)
// on loopback: connecting a site (the state cannot be tampered with or used by someone else), the
// refresh token sealed at rest, choosing a property, the leader's sync (paged, waiting out quota
// refusals, resumed after an outage or a change of leader without counting a day twice), the
// reports against the double's figures, disconnecting, and who may do what.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SiteRole } from '../../lib/auth/roles.ts';
import { createUser } from '../../lib/users/users.ts';
import { type Dimension, type DoubleRow, type GoogleDouble, type PropertyData, searchConsoleEnv, startGoogleDouble } from '../support/google-search-console-double.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const DAY_MS = 86_400_000;
const BACKFILL_DAYS = 5;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The days a first sync fetches: the five before today (UTC), oldest first. */
const DAYS = Array.from({ length: BACKFILL_DAYS }, (_, i) => isoDay(Date.now() - (BACKFILL_DAYS - i) * DAY_MS));
const YESTERDAY = DAYS[DAYS.length - 1];

/** Day i of a property: figures that differ by day and key, so a day counted twice shows. */
function dayOf(i: number, scale: number): Record<Dimension, DoubleRow[]> {
  const rows = (keys: string[]) => keys.map((key, k) => ({ key, clicks: scale * (i + 1) * (k + 1), impressions: scale * (i + 1) * (k + 1) * 10, position: 2 + k }));
  return {
    query: rows(['plumb analytics', 'self-hosted analytics', 'privacy analytics']),
    page: rows(['https://example.com/', 'https://example.com/blog/a', 'https://example.com/pricing']),
    country: rows(['usa', 'deu']),
    device: rows(['DESKTOP', 'MOBILE', 'TABLET']),
  };
}
const dataOf = (scale: number): PropertyData => Object.fromEntries(DAYS.map((day, i) => [day, dayOf(i, scale)]));
const DOMAIN = 'sc-domain:example.com';
const PREFIX = 'https://www.example.com/';
const PROPERTIES = { [DOMAIN]: dataOf(1), [PREFIX]: dataOf(7) };

/** The double's sums over every day for one dimension. */
function expectedTotals(data: PropertyData, dimension: Dimension) {
  const rows = Object.values(data).flatMap((day) => day[dimension]);
  const clicks = rows.reduce((n, r) => n + r.clicks, 0);
  const impressions = rows.reduce((n, r) => n + r.impressions, 0);
  const positionSum = rows.reduce((n, r) => n + r.position * r.impressions, 0);
  return { clicks, impressions, ctr: Math.round((clicks / impressions) * 10_000) / 100, position: Math.round((positionSum / impressions) * 10) / 10 };
}

let t: TestNode;
let google: GoogleDouble;
const routes = () => `/api/sites/${t.site.id}/plugins/search-console`;
const range = `from=${DAYS[0]}&to=${YESTERDAY}`;

interface Caller {
  id: string;
  email: string;
  cookie: string;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; location: string | null }>;
}
let people = 0;

/** A person with `role` on the test site ('outsider': none), signed in. */
async function person(role: SiteRole | 'outsider'): Promise<Caller> {
  const db = t.node.runtime.metadata();
  const user = await createUser(db, { email: `${role}-${++people}@gsc-test.example`, password: 'a long enough password', role: 'user' });
  if (role !== 'outsider') await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [t.site.id, user.id, role]);
  const session = await t.node.runtime.sessions.start(user.id, { remember: false });
  const cookie = session.setCookies.map((c) => c.split(';')[0]).join('; ');
  return { id: user.id, email: user.email, cookie, request: (method, path, body) => call(method, path, { Cookie: cookie }, body) };
}

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${t.url}${path}`, {
    method,
    redirect: 'manual',
    headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : {}) as Record<string, unknown>, location: res.headers.get('location') };
}

/** Every row of every table of the metadata store, as text. */
async function metadataText(): Promise<string> {
  const db = t.node.runtime.metadata();
  const { rows: tables } = await db.query<{ schema: string; name: string }>(
    "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
  );
  const parts: string[] = [];
  for (const { schema, name } of tables) {
    const { rows } = await db.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}"."${name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/** Goes through Google's consent as the browser would: connect, the double's redirect, then the callback. */
async function consent(admin: Caller): Promise<{ callback: string }> {
  const started = await admin.request('POST', `${routes()}/connect`, {});
  expect(started.status).toBe(200);
  const atGoogle = await fetch(started.body.url as string, { redirect: 'manual' });
  expect(atGoogle.status).toBe(302);
  const back = new URL(atGoogle.headers.get('location')!);
  return { callback: `${back.pathname}${back.search}` };
}

const connection = async (admin: Caller) => (await admin.request('GET', `${routes()}/connection`)).body;
async function syncedThrough(admin: Caller, day: string) {
  await waitFor(
    async () => {
      const now = await connection(admin);
      return now.synced_through === day && now.last_sync_finished_at !== null;
    },
    60_000,
    () => `the sync did not reach ${day}`,
  );
}

beforeAll(async () => {
  google = await startGoogleDouble(PROPERTIES);
  t = await startTestNode({
    ...searchConsoleEnv(google),
    PLUMB_SEARCH_CONSOLE_BACKFILL_DAYS: String(BACKFILL_DAYS),
    PLUMB_SEARCH_CONSOLE_ROW_LIMIT: '2',
    PLUMB_SEARCH_CONSOLE_RETRY_BASE_MS: '20',
    PLUMB_SEARCH_CONSOLE_CHECK_EVERY_SECONDS: '1',
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await google?.close();
});

describe('connecting a site: POST …/connect and GET /api/plugins/search-console/oauth/callback', () => {
  let admin: Caller;
  beforeAll(async () => {
    admin = await person('admin');
  });

  it('sends the browser to Google with the read-only scope, PKCE and a state, and back to the fixed callback', async () => {
    const res = await admin.request('POST', `${routes()}/connect`, {});
    const url = new URL(res.body.url as string);
    expect(`${url.origin}${url.pathname}`).toBe(`${google.url}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: google.clientId,
      response_type: 'code',
      scope: 'https://www.googleapis.com/auth/webmasters.readonly',
      access_type: 'offline',
      code_challenge_method: 'S256',
      redirect_uri: 'http://localhost:8080/api/plugins/search-console/oauth/callback',
    });
    expect(url.searchParams.get('state')).toMatch(/^v1\./);
  });

  it('refuses a tampered state, and a state issued to someone else', async () => {
    const { callback } = await consent(admin);
    const state = new URL(callback, t.url).searchParams.get('state')!;
    const tampered = callback.replace(encodeURIComponent(state), encodeURIComponent(`${state.slice(0, -2)}${state.endsWith('A') ? 'BB' : 'AA'}`));
    const refused = await admin.request('GET', tampered);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ fields: [{ field: 'state' }] });
    const other = await person('admin');
    expect((await other.request('GET', callback)).status).toBe(400);
    // Someone who declines at Google comes back with an error instead of a code.
    const declined = await admin.request('GET', `${callback.replace(/&code=[^&]*/, '')}&error=access_denied`);
    expect(declined).toMatchObject({ status: 409, body: { message: 'Google did not grant access (access_denied)' } });
    expect((await connection(admin)).connected).toBe(false);
  });

  it('exchanges the code, stores the refresh token sealed, and redirects to the site’s settings', async () => {
    const { callback } = await consent(admin);
    const res = await admin.request('GET', callback);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`http://localhost:8080/sites/${t.site.id}/settings`);
    expect(await connection(admin)).toMatchObject({ connected: true, property: null, connected_by: admin.email, available_properties: `${PREFIX}, ${DOMAIN}`, property_choices: [PREFIX, DOMAIN] });
    const everything = await metadataText();
    expect(everything).not.toContain(google.refreshToken);
    const { rows } = await t.node.runtime.metadata().query<{ refresh_token: string }>('SELECT refresh_token FROM plugin_search_console.connections');
    expect(rows).toEqual([{ refresh_token: expect.stringMatching(/^v1\./) }]);
    // The code was spent: the same callback again is refused by Google.
    expect((await admin.request('GET', callback)).status).toBe(502);
  });

  it('lists the account’s properties and takes only one of them', async () => {
    expect((await admin.request('GET', `${routes()}/properties`)).body).toEqual({
      properties: [
        { site_url: PREFIX, permission_level: 'siteOwner' },
        { site_url: DOMAIN, permission_level: 'siteOwner' },
      ],
    });
    const refused = await admin.request('PUT', `${routes()}/connection`, { property: 'sc-domain:elsewhere.example' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ fields: [{ field: 'property', message: expect.stringContaining(DOMAIN) }] });
  });
});

describe('the leader’s sync', () => {
  let admin: Caller;
  beforeAll(async () => {
    admin = await person('admin');
  });

  it('backfills every day, paging by startRow and waiting out quota refusals', async () => {
    google.refuseQuota(3, { status: 429 });
    const chosen = await admin.request('PUT', `${routes()}/connection`, { property: DOMAIN });
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({ property: DOMAIN, synced_through: null, status: 'Connected: nothing synced yet; the first sync runs within a few minutes' });
    await syncedThrough(admin, YESTERDAY);
    expect(await connection(admin)).toMatchObject({ last_error: null, status: 'Connected' });
    const calls = google.calls.filter((c) => c.property === DOMAIN);
    expect(calls.slice(0, 3).map((c) => c.status)).toEqual([429, 429, 429]);
    // The refused call was made again until it succeeded.
    expect(calls[3]).toMatchObject({ ...calls[0], status: 200 });
    expect(calls.every((c) => c.rowLimit === 2)).toBe(true);
    // Three queries a day at two a page: a second page from row 2, and no third.
    const queryPages = calls.filter((c) => c.day === DAYS[0] && c.dimension === 'query' && c.status === 200).map((c) => c.startRow);
    expect(queryPages).toEqual([0, 2]);
    // Two countries a day fill a page exactly: the next (empty) page says there are no more.
    expect(calls.filter((c) => c.day === DAYS[0] && c.dimension === 'country' && c.status === 200).map((c) => c.startRow)).toEqual([0, 2]);
  });

  it('reports the double’s figures: totals, days, queries, pages, countries and devices', async () => {
    const viewer = await person('viewer');
    const data = PROPERTIES[DOMAIN];
    expect((await viewer.request('GET', `${routes()}/overview?${range}`)).body).toEqual(expectedTotals(data, 'device'));
    const series = await viewer.request('GET', `${routes()}/timeseries?${range}`);
    expect(series.status).toBe(200);
    const days = series.body.days as { day: string; clicks: number }[];
    expect(days.map((d) => [d.day, d.clicks])).toEqual(DAYS.map((day) => [day, data[day].device.reduce((n, r) => n + r.clicks, 0)]));
    const queries = (await viewer.request('GET', `${routes()}/queries?${range}`)).body.queries as { key: string; clicks: number; impressions: number; position: number }[];
    expect(queries.map((q) => q.key)).toEqual(['privacy analytics', 'self-hosted analytics', 'plumb analytics']);
    expect(queries[0]).toMatchObject({ clicks: 3 * 15, impressions: 30 * 15, ctr: 10, position: 4 });
    const countries = (await viewer.request('GET', `${routes()}/countries?${range}&limit=1`)).body.countries as { key: string; clicks: number }[];
    // Google's "deu" named as Plumb names countries (ISO 3166-1 alpha-2), which the dashboard writes as the country's name.
    expect(countries).toEqual([{ key: 'DE', clicks: 30, impressions: 300, ctr: 10, position: 3 }]);
    const devices = (await viewer.request('GET', `${routes()}/devices?${range}`)).body.devices as { key: string }[];
    // Named as Plumb's own Devices panel names them, not as Google does.
    expect(devices.map((d) => d.key)).toEqual(['tablet', 'mobile', 'desktop']);
    // One day's figures alone.
    expect((await viewer.request('GET', `${routes()}/overview?from=${DAYS[0]}&to=${DAYS[0]}`)).body).toMatchObject({ clicks: 6, impressions: 60 });
  });

  it('puts Plumb’s visits landing on each page beside its search figures', async () => {
    const start = `${DAYS[1]} 10:00:00.000`;
    const visit = (session: number, entry: string, pageviews: number) => ({
      site_id: t.site.id,
      session_id: session,
      sign: 1,
      version: 1,
      visitor_id: session,
      start,
      first_ts: start,
      last_ts: start,
      visit_pageviews: pageviews,
      entry_page: entry,
      exit_page: entry,
    });
    await t.node.runtime
      .analytics()
      .insert('visits', [visit(1, '/blog/a', 3), visit(2, '/blog/a', 1), visit(3, '/pricing', 2)], { database: t.node.runtime.analytics().tenantDatabase(t.team.id) });
    const pages = (await (await person('viewer')).request('GET', `${routes()}/pages?${range}`)).body.pages as Record<string, unknown>[];
    expect(pages.map((p) => [p.page, p.clicks, p.plumb_visits, p.plumb_pageviews])).toEqual([
      ['https://example.com/pricing', 45, 1, 2],
      ['https://example.com/blog/a', 30, 2, 4],
      ['https://example.com/', 15, 0, 0],
    ]);
  });

  it('counts no day twice when a later run fetches the last days again (after waiting out a 403 rateLimitExceeded)', async () => {
    const before = google.calls.length;
    google.refuseQuota(2, { status: 403 });
    expect((await admin.request('POST', `${routes()}/sync`, {})).status).toBe(202);
    await waitFor(async () => google.calls.length > before && (await connection(admin)).last_sync_finished_at !== null && (await lastRunDone()), 60_000, () => 'no second run');
    // The second run fetched the three last days again, and nothing older.
    const again = new Set(google.calls.slice(before).map((c) => c.day));
    expect([...again].sort()).toEqual(DAYS.slice(-3));
    expect(google.calls.slice(before, before + 3).map((c) => c.status)).toEqual([403, 403, 200]);
    expect((await admin.request('GET', `${routes()}/overview?${range}`)).body).toEqual(expectedTotals(PROPERTIES[DOMAIN], 'device'));
  });

  it('resumes after an outage mid-day at the first day not done, and the half-written day counts once', async () => {
    // A property switch starts from the oldest day. Google fails after a day and a half of calls:
    // each day takes 2 + 2 + 2 + 2 calls (query, page, country, device at two rows a page).
    google.failAfter(8 + 4);
    const before = google.calls.length;
    expect((await admin.request('PUT', `${routes()}/connection`, { property: PREFIX })).status).toBe(200);
    await waitFor(async () => (await connection(admin)).last_error !== null, 60_000, () => 'the sync did not fail');
    const failed = await connection(admin);
    expect(failed).toMatchObject({ synced_through: DAYS[0], last_error: expect.stringContaining('500') });
    // The second day's query and page rows were written before the outage.
    const written = await t.node.runtime
      .analytics()
      .query<{ n: string }>(`SELECT count() AS n FROM {db:Identifier}.plugin_search_console_rows WHERE property = {p:String} AND day = {d:Date}`, { db: t.node.runtime.analytics().tenantDatabase(t.team.id), p: PREFIX, d: DAYS[1] });
    expect(Number(written[0].n)).toBeGreaterThan(0);
    google.recover();
    expect((await admin.request('POST', `${routes()}/sync`, {})).status).toBe(202);
    await syncedThrough(admin, YESTERDAY);
    const resumed = google.calls.slice(before).filter((c) => c.status === 200);
    // The resumed run started at the second day (the first was recorded as done).
    expect(resumed.filter((c) => c.day === DAYS[0]).length).toBe(8);
    expect((await admin.request('GET', `${routes()}/overview?${range}`)).body).toEqual(expectedTotals(PROPERTIES[PREFIX], 'device'));
    expect((await admin.request('GET', `${routes()}/queries?${range}`)).body.queries).toEqual(
      ['privacy analytics', 'self-hosted analytics', 'plumb analytics'].map((key, k) => expect.objectContaining({ key, clicks: 7 * 15 * (3 - k) })),
    );
  });

  it('resumes on the next leader when the leader steps down mid-sync, counting no day twice', async () => {
    google.slow(40);
    const before = google.calls.length;
    // Back to the first property: every day is fetched again (and its older copy replaced).
    expect((await admin.request('PUT', `${routes()}/connection`, { property: DOMAIN })).status).toBe(200);
    await waitFor(async () => google.calls.length - before >= 12, 30_000, () => 'the sync did not start');
    const elector = t.node.runtime.elector;
    await elector.stop();
    // A call already sent when the leader stepped down may still reach Google (the double counts
    // it on arrival); none may be sent after it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stoppedAt = google.calls.length;
    const { synced_through: reached } = await connection(admin);
    expect(reached === null || (reached as string) < YESTERDAY).toBe(true);
    // The deposed leader makes no more calls.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(google.calls.length).toBe(stoppedAt);
    google.slow(0);
    await elector.start();
    await syncedThrough(admin, YESTERDAY);
    // The new leader began at the first day not recorded (or at the last three days, which every run fetches).
    const firstResumed = google.calls.slice(stoppedAt).map((c) => c.day).sort()[0];
    expect(firstResumed).toBe(reached === null ? DAYS[0] : DAYS[Math.min(DAYS.indexOf(reached as string) + 1, 2)]);
    expect((await admin.request('GET', `${routes()}/overview?${range}`)).body).toEqual(expectedTotals(PROPERTIES[DOMAIN], 'device'));
    expect((await admin.request('GET', `${routes()}/pages?${range}`)).body.pages).toEqual([
      expect.objectContaining({ page: 'https://example.com/pricing', clicks: 45 }),
      expect.objectContaining({ page: 'https://example.com/blog/a', clicks: 30 }),
      expect.objectContaining({ page: 'https://example.com/', clicks: 15 }),
    ]);
  });

  async function lastRunDone() {
    const { rows } = await t.node.runtime
      .metadata()
      .query<{ done: boolean }>('SELECT last_sync_finished_at >= last_sync_started_at AS done FROM plugin_search_console.connections WHERE site_id = $1', [t.site.id]);
    return rows[0]?.done === true;
  }
});

describe('PUT …/connection with no property', () => {
  it('stops syncing and keeps the connection', async () => {
    const admin = await person('admin');
    const cleared = await admin.request('PUT', `${routes()}/connection`, { property: null });
    expect(cleared).toMatchObject({ status: 200, body: { connected: true, property: null, synced_through: null, status: 'Connected: choose the property to sync' } });
    expect((await admin.request('POST', `${routes()}/sync`, {})).status).toBe(409);
  });
});

describe('POST …/disconnect', () => {
  it('deletes the sealed token and the sync state; the reports show nothing until it is connected again', async () => {
    const admin = await person('admin');
    const { rows } = await t.node.runtime.metadata().query<{ refresh_token: string }>('SELECT refresh_token FROM plugin_search_console.connections');
    const sealed = rows[0].refresh_token;
    expect(await metadataText()).toContain(sealed);
    const res = await admin.request('POST', `${routes()}/disconnect`, {});
    expect(res).toMatchObject({ status: 200, body: { message: 'Disconnected from Google Search Console.' } });
    const everything = await metadataText();
    expect(everything).not.toContain(sealed);
    expect(everything).not.toContain(google.refreshToken);
    expect(await connection(admin)).toMatchObject({ connected: false, property: null, synced_through: null });
    expect((await admin.request('GET', `${routes()}/overview?${range}`)).body).toEqual({ clicks: 0, impressions: 0, ctr: null, position: null });
    expect((await admin.request('POST', `${routes()}/sync`, {})).status).toBe(409);
    expect((await admin.request('GET', `${routes()}/properties`)).status).toBe(409);
  });
});

describe('who may', () => {
  it('connect, choose, sync and disconnect: site admins only; reports: anyone who reads the site’s stats', async () => {
    for (const role of ['viewer', 'editor'] as const) {
      const someone = await person(role);
      for (const [method, path] of [
        ['POST', '/connect'],
        ['GET', '/connection'],
        ['PUT', '/connection'],
        ['GET', '/properties'],
        ['POST', '/sync'],
        ['POST', '/disconnect'],
      ]) {
        expect([role, method, path, (await someone.request(method, `${routes()}${path}`, method === 'GET' ? undefined : { property: null })).status]).toEqual([role, method, path, 403]);
      }
      expect((await someone.request('GET', `${routes()}/overview`)).status).toBe(200);
    }
    const outsider = await person('outsider');
    expect((await outsider.request('GET', `${routes()}/overview`)).status).toBe(404);
    expect((await outsider.request('POST', `${routes()}/connect`, {})).status).toBe(404);
    expect((await call('GET', `${routes()}/overview`, {})).status).toBe(401);
    const reader = await t.token(['stats:read'], [{ siteId: t.site.id, role: 'admin' }]);
    expect((await call('GET', `${routes()}/queries`, { Authorization: `Bearer ${reader}` })).status).toBe(200);
    // Connecting is a person's act: an API token is refused even with the admin role.
    expect((await call('POST', `${routes()}/connect`, { Authorization: `Bearer ${reader}` }, {})).status).toBe(403);
    expect((await call('GET', '/api/plugins/search-console/oauth/callback?state=x&code=y', {})).status).toBe(401);
  });
});
