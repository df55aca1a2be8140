// A site moves between instances whole through its takeout: a lived-in site is taken out in every
// format, and each takeout, imported into a fresh site of the same domain on a fresh node, gives
// back identical stats, breakdowns, event analytics, goals with their conversions and funnels.
// Deleting the import empties the site again (rows, goals, funnels), so the next format starts
// from nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cookiesOf } from '../support/accounts.ts';
import { importFiles } from '../support/imports.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';
import { OWNER, type SeededInstance, seedInstance } from '../support/seeded-instance.ts';
import { call, siteFigures } from '../support/site-figures.ts';

const DAY = 86_400_000;
const FORMATS = ['xlsx', 'csv', 'ndjson', 'json', 'parquet'] as const;

describe('a site taken out and imported elsewhere', () => {
  let original: Instance;
  let fresh: Instance;
  let seeded: SeededInstance;
  let ownerCookie: string;
  let freshCookie: string;
  let freshSiteId: string;
  let before: Awaited<ReturnType<typeof siteFigures>>;
  const takeouts = new Map<string, { name: string; bytes: Uint8Array<ArrayBuffer> }>();
  const range = { from: new Date(Date.now() - 70 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) };

  beforeAll(async () => {
    [original, fresh] = await Promise.all([startInstance(), startInstance()]);
    seeded = await seedInstance(original);
    ownerCookie = seeded.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    before = await siteFigures(original.url, ownerCookie, seeded.siteId, range);
    for (const format of FORMATS) {
      const res = await fetch(`${original.url}/api/sites/${seeded.siteId}/takeout?format=${format}`, { headers: { Cookie: ownerCookie } });
      expect(res.status).toBe(200);
      const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? '';
      takeouts.set(format, { name, bytes: new Uint8Array(await res.arrayBuffer()) });
    }
    freshCookie = cookiesOf(await request(`${fresh.url}/api/initial-user`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(OWNER) }));
    const teamId = ((await call(fresh.url, freshCookie, 'GET', '/api/user/teams')).body.items as { id: string }[])[0].id;
    freshSiteId = ((await call(fresh.url, freshCookie, 'POST', '/api/sites', { domain: 'shop.example.com', team_id: teamId, timezone: 'Europe/Berlin' })).body.site as { id: string }).id;
  }, 300_000);

  afterAll(async () => {
    await Promise.all([original?.destroy(), fresh?.destroy()]);
  });

  it('names each takeout after the site', () => {
    for (const format of FORMATS) expect(takeouts.get(format)?.name).toMatch(new RegExp(`^shop\\.example\\.com-takeout-\\d{4}-\\d{2}-\\d{2}\\.${format === 'xlsx' ? 'xlsx' : 'zip'}$`));
  });

  for (const format of FORMATS) {
    it(`gives back every figure from the ${format} takeout, and deleting the import empties the site`, async () => {
      const takeout = takeouts.get(format)!;
      const { validated, finished } = await importFiles(fresh.url, freshCookie, freshSiteId, 'plumb', [takeout]);
      expect(validated.manifest?.rows_skipped).toBe(0);
      expect(finished).toMatchObject({ state: 'completed', error: null });
      expect(await siteFigures(fresh.url, freshCookie, freshSiteId, range)).toEqual(before);

      expect((await call(fresh.url, freshCookie, 'DELETE', `/api/sites/${freshSiteId}/imports/${finished.id}`)).status).toBe(204);
      const kpis = (await call(fresh.url, freshCookie, 'GET', `/api/sites/${freshSiteId}/stats/kpis?${new URLSearchParams(range)}`)).body as { kpis: { pageviews: number; visits: number } };
      expect(kpis.kpis).toMatchObject({ pageviews: 0, visits: 0 });
      // The goals and funnels it added went with it.
      for (const kind of ['goals', 'funnels']) expect((await call(fresh.url, freshCookie, 'GET', `/api/sites/${freshSiteId}/${kind}`)).body.items).toEqual([]);
    }, 300_000);
  }
});
