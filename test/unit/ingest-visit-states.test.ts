// How the ingest writer derives the `visits` rows from the hits and events of each batch it stores.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { JournalRecord } from '../../lib/ingest/pipeline.ts';
import { currentLayout, rowOfValues } from '../../lib/ingest/row-layouts.ts';
import { silentLog } from '../../lib/log.ts';
import { createVisitStateDeriver, readStoredStates, type VisitStates, type VisitStatesOptions } from '../../lib/ingest/visit-states.ts';
import { visitStatesInWorker } from '../../lib/ingest/visit-states-worker.ts';
import { MAX_VISIT_PAGES } from '../../lib/ingest/visits.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';

const MINUTE = 60_000;
const SITE = '6d1f4b2e-8f0a-4c55-9d0e-1b2c3d4e5f60';
const VISIT_COLUMNS = currentLayout('visits')!.columns;

const hit = (ts: string, path: string, extra: Record<string, unknown> = {}): JournalRecord => ({
  table: 'hits',
  team: 'team',
  derivesVisit: true,
  row: { ts, site_id: SITE, session_id: '42', visitor_id: '7', path, hostname: 'example.com', referrer: 'google.com', country: 'DE', is_entry: 0, ...extra },
});
const entry = (ts: string, path: string, extra: Record<string, unknown> = {}) => hit(ts, path, { is_entry: 1, ...extra });
const event = (name: string, props: Record<string, string> = {}): JournalRecord => ({
  table: 'events',
  team: 'team',
  derivesVisit: true,
  row: { ts: '2026-01-01T10:00:30.000Z', site_id: SITE, session_id: '42', visitor_id: '7', name, props },
});

/** A store whose visits are `stored`; it records the parameters of every read. */
function storeWith(stored: Record<string, unknown>[] = []) {
  const reads: Record<string, unknown>[] = [];
  const analytics = {
    async query(_sql: string, params: Record<string, unknown>) {
      reads.push(params);
      return stored;
    },
  } as unknown as AnalyticsStore;
  return { analytics, reads };
}

const rowsOf = (lines: string[]) => lines.map((line) => rowOfValues(VISIT_COLUMNS, JSON.parse(line) as unknown[]));

/** Derives each batch in turn, keeping its states as the writer does once a batch is stored; answers each batch's rows. */
async function deriveAll(states: VisitStates, batches: JournalRecord[][], analytics = storeWith().analytics) {
  const written: Record<string, unknown>[][] = [];
  for (const batch of batches) {
    const derived = await states.derive(analytics, 'tenant_team', batch);
    derived.keep();
    written.push(rowsOf(derived.lines));
  }
  return written;
}

const OPTIONS = { idleMs: 30 * MINUTE, maxVisits: 1000 };

/** The derivation on the calling thread, behind the interface the writer uses (which runs it on a worker thread). */
function inThisThread(options: VisitStatesOptions): VisitStates {
  const deriver = createVisitStateDeriver(options);
  return {
    derive: (analytics, database, records) => deriver.derive(records, (visits) => readStoredStates(analytics, database, visits)),
    size: async () => deriver.size(),
    close: async () => undefined,
  };
}
const opened: VisitStates[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((states) => states.close()));
});
const opening = (states: VisitStates) => {
  opened.push(states);
  return states;
};

describe.each([
  ['on the calling thread', () => opening(inThisThread(OPTIONS))],
  ['on a worker thread', () => opening(visitStatesInWorker({ ...OPTIONS, log: silentLog }))],
])('visit states derived by the ingest writer, %s', (_where, newStates) => {
  it("make a visit's first state from its entry hit, then per batch the cancellation of the stored state and the next one, without reading the store", async () => {
    const { analytics, reads } = storeWith();
    const [first, second, engaged, counted] = await deriveAll(
      newStates(),
      [[entry('2026-01-01T10:00:00.000Z', '/')], [hit('2026-01-01T10:02:00.000Z', '/pricing', { referrer: '' })], [event('$engagement', { engagement_ms: '1500' })], [event('signup')]],
      analytics,
    );
    expect(first).toEqual([expect.objectContaining({ sign: 1, version: 1, visit_pageviews: 1, entry_page: '/', exit_page: '/', pages: ['/'], page_hits: [1], referrer: 'google.com' })]);
    expect(second).toEqual([
      { ...first[0], sign: -1 },
      expect.objectContaining({ sign: 1, version: 2, visit_pageviews: 2, exit_page: '/pricing', pages: ['/', '/pricing'], page_hits: [1, 1], referrer: 'google.com', last_ts: '2026-01-01T10:02:00.000Z' }),
    ]);
    expect(engaged).toEqual([{ ...second[1], sign: -1 }, expect.objectContaining({ sign: 1, version: 3, visit_engagement_ms: 1500, events: 0 })]);
    expect(counted[1]).toMatchObject({ version: 4, events: 1, visit_engagement_ms: 1500 });
    expect(reads).toEqual([]);
  });

  it("fold a batch's hits and events of one visit into one state", async () => {
    const [rows] = await deriveAll(newStates(), [[entry('2026-01-01T10:00:00.000Z', '/'), hit('2026-01-01T10:01:00.000Z', '/a'), event('signup'), hit('2026-01-01T10:02:00.000Z', '/')]]);
    expect(rows).toEqual([expect.objectContaining({ sign: 1, version: 1, visit_pageviews: 3, events: 1, pages: ['/', '/a'], page_hits: [2, 1], exit_page: '/' })]);
  });

  it('count events sent before the first pageview into the visit, and write nothing for them', async () => {
    const { analytics, reads } = storeWith();
    const [before, started] = await deriveAll(newStates(), [[event('$engagement', { engagement_ms: '300' }), event('signup')], [hit('2026-01-01T10:00:00.000Z', '/')]], analytics);
    expect(before).toEqual([]);
    expect(started).toEqual([expect.objectContaining({ sign: 1, version: 1, events: 1, visit_engagement_ms: 300 })]);
    // The store was asked once, for the visit the events named; the pageview found it remembered.
    expect(reads).toHaveLength(1);
  });

  it('keep the day and entry of the first pageview received when an earlier one arrives late, and lengthen the visit', async () => {
    const [, [, late]] = await deriveAll(newStates(), [[entry('2026-01-01T10:05:00.000Z', '/b')], [hit('2026-01-01T10:01:00.000Z', '/a')]]);
    expect(late).toMatchObject({ start: '2026-01-01T10:05:00.000Z', first_ts: '2026-01-01T10:01:00.000Z', last_ts: '2026-01-01T10:05:00.000Z', entry_page: '/b', exit_page: '/b', pages: ['/a', '/b'] });
  });

  it('read the state of a visit they do not know from the store, cancel that very row, and compare its times as times', async () => {
    // Every column, as the store answers them.
    const inStore = {
      ...Object.fromEntries(VISIT_COLUMNS.map((column) => [column, ''])),
      site_id: SITE,
      session_id: '42',
      sign: 1,
      version: 2,
      visitor_id: '7',
      start: '2026-01-01 10:00:00.000',
      first_ts: '2026-01-01 10:00:00.000',
      last_ts: '2026-01-01 10:03:00.000',
      visit_pageviews: 2,
      events: 1,
      visit_engagement_ms: '1500',
      entry_page: '/p0',
      exit_page: '/p1',
      pages: ['/p0', '/p1'],
      page_hits: [1, 1],
      hostnames: ['example.com'],
      hostname_hits: [2],
      referrer: 'google.com',
      country: 'DE',
    };
    const { analytics, reads } = storeWith([inStore]);
    // Earlier than the stored first pageview by a minute: its text sorts after the store's ("T" > " ").
    const [rows] = await deriveAll(newStates(), [[hit('2026-01-01T09:59:00.000Z', '/p2')]], analytics);
    expect(rows[0]).toEqual({ ...inStore, sign: -1 });
    expect(rows[1]).toMatchObject({
      sign: 1,
      version: 3,
      visit_pageviews: 3,
      events: 1,
      visit_engagement_ms: 1500,
      start: '2026-01-01T10:00:00.000Z',
      first_ts: '2026-01-01T09:59:00.000Z',
      last_ts: '2026-01-01T10:03:00.000Z',
      entry_page: '/p0',
      exit_page: '/p1',
      pages: ['/p0', '/p1', '/p2'],
      page_hits: [1, 1, 1],
      referrer: 'google.com',
    });
    expect(reads).toEqual([expect.objectContaining({ sites: [SITE], visits: [42n] })]);
  });

  it("fold the records of a visit read from the store in journal order, beside the batch's other visits, with one read", async () => {
    const inStore = {
      ...Object.fromEntries(VISIT_COLUMNS.map((column) => [column, ''])),
      ...{ site_id: SITE, session_id: '42', sign: 1, version: 2, visitor_id: '7', start: '2026-01-01 10:00:00.000', first_ts: '2026-01-01 10:00:00.000', last_ts: '2026-01-01 10:01:00.000' },
      ...{ visit_pageviews: 2, events: 0, visit_engagement_ms: '0', entry_page: '/', exit_page: '/a', pages: ['/', '/a'], page_hits: [1, 1], hostnames: ['example.com'], hostname_hits: [2] },
    };
    const { analytics, reads } = storeWith([inStore]);
    const other = (ts: string, path: string) => entry(ts, path, { session_id: '43' });
    const batch = [hit('2026-01-01T10:05:00.000Z', '/x'), other('2026-01-01T10:05:00.000Z', '/'), event('signup'), hit('2026-01-01T10:06:00.000Z', '/y')];
    const [rows] = await deriveAll(newStates(), [batch], analytics);
    expect(rows).toEqual([
      expect.objectContaining({ session_id: '43', sign: 1, version: 1, visit_pageviews: 1 }),
      expect.objectContaining({ session_id: '42', sign: -1, version: 2, visit_pageviews: 2 }),
      expect.objectContaining({ session_id: '42', sign: 1, version: 3, visit_pageviews: 4, events: 1, exit_page: '/y', last_ts: '2026-01-01T10:06:00.000Z', pages: ['/', '/a', '/x', '/y'] }),
    ]);
    expect(reads).toEqual([expect.objectContaining({ visits: [42n] })]);
  });

  it('start a visit the store does not have from its first pageview received', async () => {
    const [rows] = await deriveAll(newStates(), [[hit('2026-01-01T10:00:00.000Z', '/late-entry')]]);
    expect(rows).toEqual([expect.objectContaining({ sign: 1, version: 1, entry_page: '/late-entry', visit_pageviews: 1 })]);
  });

  it('read a visit back from the store after forgetting a batch that may have been stored before', async () => {
    const states = newStates();
    const { analytics, reads } = storeWith();
    (await states.derive(analytics, 'tenant_team', [entry('2026-01-01T10:00:00.000Z', '/')])).forget();
    await states.derive(analytics, 'tenant_team', [hit('2026-01-01T10:01:00.000Z', '/a')]);
    expect(reads).toHaveLength(1);
    expect(await states.size()).toBe(0);
  });

  it('remember nothing of a batch until it is kept', async () => {
    const states = newStates();
    const { analytics, reads } = storeWith();
    await states.derive(analytics, 'tenant_team', [entry('2026-01-01T10:00:00.000Z', '/')]);
    const again = await states.derive(analytics, 'tenant_team', [entry('2026-01-01T10:00:00.000Z', '/')]);
    expect(rowsOf(again.lines)).toEqual([expect.objectContaining({ sign: 1, version: 1 })]);
    expect([reads, await states.size()]).toEqual([[], 0]);
  });

  it('list pages and hostnames in code-unit order with their hits, whatever order they come in', async () => {
    const paths = ['/m', '/b', '/z', '/b', '/B', '/é', '/a', '/m'];
    const batches = paths.map((path, i) => [(i === 0 ? entry : hit)(`2026-01-01T10:00:0${i}.000Z`, path, { hostname: i % 3 === 0 ? 'www.example.com' : 'example.com' })]);
    const written = await deriveAll(newStates(), batches);
    const last = written[written.length - 1][1];
    expect([last.pages, last.page_hits]).toEqual([
      ['/B', '/a', '/b', '/m', '/z', '/é'],
      [1, 1, 2, 2, 1, 1],
    ]);
    expect([last.hostnames, last.hostname_hits]).toEqual([
      ['example.com', 'www.example.com'],
      [5, 3],
    ]);
    // Each batch cancels exactly the state the one before it stored.
    for (let i = 1; i < written.length; i++) expect(written[i][0]).toEqual({ ...written[i - 1][written[i - 1].length - 1], sign: -1 });
  });

  it(`stop listing new pages past ${MAX_VISIT_PAGES}, while every pageview still counts`, async () => {
    const views = Array.from({ length: MAX_VISIT_PAGES + 10 }, (_, i) => (i === 0 ? entry : hit)(`2026-01-01T10:00:${String(i % 60).padStart(2, '0')}.000Z`, `/p${String(i).padStart(3, '0')}`));
    const [[state]] = await deriveAll(newStates(), [[...views, hit('2026-01-01T10:01:00.000Z', '/p000')]]);
    expect((state.pages as string[]).length).toBe(MAX_VISIT_PAGES);
    expect([state.visit_pageviews, (state.page_hits as number[])[0], state.hostname_hits]).toEqual([MAX_VISIT_PAGES + 11, 2, [MAX_VISIT_PAGES + 11]]);
  });
});

describe('visit states remembered by the ingest writer', () => {
  it('forget visits nobody touched for the visit timeout (wall clock)', async () => {
    let now = 1_000_000;
    const states = opening(inThisThread({ ...OPTIONS, clock: () => now }));
    const visit = (session: string) => entry('2026-01-01T10:00:00.000Z', '/', { session_id: session });
    await deriveAll(states, [[visit('1')]]);
    now += 20 * MINUTE;
    await deriveAll(states, [[visit('2')]]);
    now += 15 * MINUTE; // visit 1 idle for 35 minutes, visit 2 for 15
    await deriveAll(states, [[visit('3')]]);
    expect(await states.size()).toBe(2);
  });
});
