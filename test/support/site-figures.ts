// Everything the dashboard shows of a site over a fixed range, read through the API: the figures a
// restore, a site move or a takeout imported elsewhere must give back identical.
import { expect } from '@jest/globals';
import { request } from './instance.ts';

/** A call as a session (a cookie header's value) or as a token (`Bearer …`). */
export async function call(url: string, auth: string, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = auth.startsWith('Bearer ') ? { Authorization: auth } : { Cookie: auth };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return request(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/**
 * KPIs, the daily timeseries, the breakdowns, event analytics, goals with their conversions and
 * funnels with theirs. Goals and funnels are keyed by name, not id, so that a copy on another
 * site (which gives them new ids) compares equal.
 */
export async function siteFigures(url: string, auth: string, siteId: string, range: { from: string; to: string }) {
  const q = new URLSearchParams(range).toString();
  const get = async (path: string) => {
    const res = await call(url, auth, 'GET', path);
    expect(res.status).toBe(200);
    return res.body;
  };
  const breakdowns: Record<string, unknown> = {};
  for (const dimension of ['pages', 'sources', 'countries', 'devices', 'browsers', 'entry_pages', 'channels']) {
    breakdowns[dimension] = await get(`/api/sites/${siteId}/stats/breakdown?${q}&dimension=${dimension}&limit=100`);
  }
  const goals = ((await get(`/api/sites/${siteId}/goals`)) as { items: { id: string; name: string }[] }).items;
  const goalStats = ((await get(`/api/sites/${siteId}/goals/stats?${q}`)) as { rows: unknown[] }).rows;
  const funnels = ((await get(`/api/sites/${siteId}/funnels`)) as { items: { id: string; name: string }[] }).items;
  const funnelStats: Record<string, unknown> = {};
  for (const funnel of funnels) funnelStats[funnel.name] = withoutIds(await get(`/api/sites/${siteId}/funnels/${funnel.id}/stats?${q}`));
  return {
    kpis: await get(`/api/sites/${siteId}/stats/kpis?${q}`),
    timeseries: await get(`/api/sites/${siteId}/stats/timeseries?${q}&interval=day`),
    breakdowns,
    eventNames: await get(`/api/sites/${siteId}/events/names?${q}`),
    signupPlans: await get(`/api/sites/${siteId}/events/breakdown?${q}&event_name=Signup&property_key=plan`),
    goals: Object.fromEntries(goals.map((goal) => [goal.name, withoutIds(goal)])),
    goalStats: goalStats.map(withoutIds),
    funnels: Object.fromEntries(funnels.map((funnel) => [funnel.name, withoutIds(funnel)])),
    funnelStats,
  };
}

/** The value without the fields that name a record or its site (`id`, `*_id`) or say when it was made or changed. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'id' && !key.endsWith('_id') && key !== 'created_at' && key !== 'updated_at')
      .map(([key, inner]) => [key, withoutIds(inner)]),
  );
}
