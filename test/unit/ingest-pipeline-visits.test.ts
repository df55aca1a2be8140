import { describe, expect, it } from '@jest/globals';
import { JournalFullError } from '../../lib/ingest/journal.ts';
import { type IngestDeps, type JournalRecord, serverPageview, trackerPageview } from '../../lib/ingest/pipeline.ts';
import { currentLayout } from '../../lib/ingest/row-layouts.ts';
import { createVisitTracker } from '../../lib/ingest/visit-tracker.ts';
import { visitStateKey, withoutPassingStates } from '../../lib/ingest/visits.ts';
import type { Site } from '../../lib/sites/sites.ts';

const SITE: Site = { id: '6d1f4b2e-8f0a-4c55-9d0e-1b2c3d4e5f60', team_id: 'team', domain: 'example.com', timezone: 'UTC', tenant: 'tenant_team' };
const REQUEST = { ip: '193.0.6.139', userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', origin: 'https://example.com', headers: {} };

/** Deps whose journal refuses the appends listed in `refused` (by position) and keeps the others. */
function depsWithJournal(refused: Set<number>) {
  const stored: JournalRecord[][] = [];
  let appends = 0;
  const deps: IngestDeps = {
    geo: { lookup: () => ({ country: 'NL', region: '' }), close() {} },
    salts: { forTime: async () => new Uint8Array(32).fill(1), prune: async () => 0 },
    visits: createVisitTracker({ timeoutMs: 30 * 60_000 }),
    sites: { byHostname: async () => SITE, byId: async () => SITE, invalidate() {} },
    rejections: { count() {}, flush: async () => {} },
    journal: {
      append: async (records) => {
        if (refused.has(appends++)) throw new JournalFullError(1, 1);
        stored.push([...records]);
      },
    },
    appended() {},
  };
  return { deps, stored };
}

describe('tracker pageviews and their visits', () => {
  it('journal the hit alone, marked for the writer to derive its visit from', async () => {
    const { deps, stored } = depsWithJournal(new Set());
    await trackerPageview(deps, { url: 'https://example.com/' }, REQUEST);
    await trackerPageview(deps, { url: 'https://example.com/pricing' }, REQUEST);
    expect(stored.map((records) => records.map((r) => [r.table, r.derivesVisit, r.row.is_entry]))).toEqual([[['hits', true, 1]], [['hits', true, 0]]]);
    expect(stored[1][0].row.session_id).toBe(stored[0][0].row.session_id);
  });

  it("journal the hit with exactly the columns of its table's layout, in order", async () => {
    // The layout is how the hit is journaled and inserted (values without names): a column the
    // row has and its layout lacks would be lost.
    const { deps, stored } = depsWithJournal(new Set());
    await trackerPageview(deps, { url: 'https://example.com/?utm_source=news&utm_medium=mail', referrer: 'https://www.google.com/', width: 390 }, REQUEST);
    await trackerPageview(deps, { url: 'https://example.com/pricing' }, REQUEST);
    const hits = stored.flat();
    expect(hits).toHaveLength(2);
    for (const hit of hits) expect(Object.keys(hit.row)).toEqual(currentLayout('hits')!.columns);
  });

  it('start a new visit, with its entry, after an append that failed', async () => {
    const { deps, stored } = depsWithJournal(new Set([1]));
    await trackerPageview(deps, { url: 'https://example.com/' }, REQUEST);
    await expect(trackerPageview(deps, { url: 'https://example.com/pricing' }, REQUEST)).rejects.toMatchObject({ code: 503 });
    await trackerPageview(deps, { url: 'https://example.com/docs' }, REQUEST);
    const [first, third] = stored;
    expect(third[0].row.session_id).not.toBe(first[0].row.session_id);
    expect(third.map((r) => [r.table, r.row.is_entry])).toEqual([['hits', 1]]);
  });
});

describe('visits on two sites', () => {
  const OTHER: Site = { ...SITE, id: '0b5c7a1e-3d2f-4e6a-8b9c-0d1e2f3a4b5c', domain: 'other.example' };
  const CLIENT = { id: 'client', name: 'server', scopes: ['ingest:write'], sites: { [SITE.id]: 'editor' as const, [OTHER.id]: 'editor' as const } };

  function depsOfTwoSites() {
    const { deps, stored } = depsWithJournal(new Set());
    const byHostname = async (hostname: string) => (hostname === OTHER.domain ? OTHER : SITE);
    return { deps: { ...deps, sites: { ...deps.sites, byHostname } }, stored };
  }

  it('are apart for one visitor (the same address and browser) on both', async () => {
    const { deps, stored } = depsOfTwoSites();
    await trackerPageview(deps, { url: 'https://example.com/' }, REQUEST);
    await trackerPageview(deps, { url: 'https://other.example/' }, { ...REQUEST, origin: 'https://other.example' });
    await trackerPageview(deps, { url: 'https://example.com/pricing' }, REQUEST);
    const [first, other, again] = stored.map(([record]) => record.row);
    expect(other.session_id).not.toBe(first.session_id);
    expect([first.is_entry, other.is_entry, again.is_entry]).toEqual([1, 1, 0]);
    expect(again.session_id).toBe(first.session_id);
  });

  it("are apart when a server sends the same visit key for both (the key is the client's own, per site)", async () => {
    const { deps, stored } = depsOfTwoSites();
    const item = { timestamp: new Date().toISOString(), visitor_ip: '193.0.6.139', user_agent: REQUEST.userAgent, session_id: 'checkout-42' };
    await serverPageview(deps, { ...item, url: 'https://example.com/' }, CLIENT);
    await serverPageview(deps, { ...item, url: 'https://other.example/' }, CLIENT);
    await serverPageview(deps, { ...item, url: 'https://example.com/done', user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' }, CLIENT);
    const [first, other, again] = stored.map(([record]) => record.row);
    expect(other.session_id).not.toBe(first.session_id);
    // The client's key, not the address and browser, names the visit: a new browser stays in it.
    expect(again.session_id).toBe(first.session_id);
    expect([first.is_entry, other.is_entry, again.is_entry]).toEqual([1, 1, 0]);
  });
});

describe('withoutPassingStates, over visit rows of an earlier version', () => {
  const visit = (version: number, sign: 1 | -1, session = '1') => ({ table: 'visits' as const, team: 'team', row: { site_id: SITE.id, session_id: session, version, sign } });
  const hit = (id: number) => ({ table: 'hits' as const, team: 'team', row: { hit_id: String(id) } });

  it('keeps, per visit, only the cancellation of the state before the records and the last state', () => {
    const records = [hit(1), visit(3, -1), visit(4, 1), hit(2), visit(4, -1), visit(5, 1), hit(3), visit(5, -1), visit(6, 1), visit(1, 1, '2')];
    expect(withoutPassingStates(records, (r) => visitStateKey(r.row))).toEqual([hit(1), visit(3, -1), hit(2), hit(3), visit(6, 1), visit(1, 1, '2')]);
  });

  it('leaves one hit and its visit states as they are', () => {
    const records = [hit(1), visit(1, -1), visit(2, 1)];
    expect(withoutPassingStates(records, (r) => visitStateKey(r.row))).toBe(records);
  });
});
