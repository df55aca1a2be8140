import { describe, expect, it } from '@jest/globals';
import { createVisitTracker } from '../../lib/ingest/visit-tracker.ts';
import { MAX_VISIT_PAGES } from '../../lib/ingest/visits.ts';

const MINUTE = 60_000;

describe('createVisitTracker', () => {
  it('keeps a visitor in one visit while they are active, and starts a new one after 30 idle minutes', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const first = visits.touch('site', 'v1', 0);
    const during = visits.touch('site', 'v1', 29 * MINUTE);
    const stillDuring = visits.touch('site', 'v1', 58 * MINUTE);
    const after = visits.touch('site', 'v1', 89 * MINUTE);
    expect([first.isEntry, during.isEntry, stillDuring.isEntry, after.isEntry]).toEqual([true, false, false, true]);
    expect(during.visitId).toBe(first.visitId);
    expect(stillDuring.visitId).toBe(first.visitId);
    expect(after.visitId).not.toBe(first.visitId);
    expect(first.visitId).toMatch(/^\d+$/);
  });

  it('separates visitors and sites', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const a = visits.touch('site-1', 'v1', 0);
    expect(visits.touch('site-1', 'v2', 0).visitId).not.toBe(a.visitId);
    expect(visits.touch('site-2', 'v1', 0).visitId).not.toBe(a.visitId);
  });

  it('forgets the least recently seen visitor when full', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE, maxEntries: 2 });
    visits.touch('s', 'a', 0);
    visits.touch('s', 'b', 0);
    visits.touch('s', 'a', 1);
    visits.touch('s', 'c', 2);
    expect(visits.size()).toBe(2);
    expect(visits.touch('s', 'a', 3).isEntry).toBe(false);
    expect(visits.touch('s', 'b', 4).isEntry).toBe(true);
  });
});

describe('the running state of a visit', () => {
  const hit = (ts: string, path: string, extra: Record<string, string> = {}) => ({
    ts,
    columns: { site_id: 'site', session_id: '1', visitor_id: '7', path, hostname: 'example.com', referrer: 'google.com', country: 'DE', ...extra },
  });

  it('writes its first state, then for each change the cancellation of the last state (by reference) and the next one', () => {
    const { visit } = createVisitTracker({ timeoutMs: 30 * MINUTE }).touch('site', 'v1', 0);
    const first = visit.pageview(hit('2026-01-01T10:00:00.000Z', '/'));
    expect(first).toEqual([expect.objectContaining({ sign: 1, version: 1, visit_pageviews: 1, entry_page: '/', exit_page: '/', pages: ['/'], page_hits: [1], referrer: 'google.com' })]);
    const second = visit.pageview(hit('2026-01-01T10:02:00.000Z', '/pricing', { referrer: '' }));
    expect(second).toEqual([
      { site_id: 'site', session_id: '1', sign: -1, version: 1, start: '2026-01-01T10:00:00.000Z', $reference: 1 },
      expect.objectContaining({ sign: 1, version: 2, visit_pageviews: 2, exit_page: '/pricing', pages: ['/', '/pricing'], page_hits: [1, 1], referrer: 'google.com', last_ts: '2026-01-01T10:02:00.000Z' }),
    ]);
    const engaged = visit.event({ engagementMs: 1500 });
    expect(engaged[1]).toMatchObject({ sign: 1, version: 3, visit_engagement_ms: 1500, events: 0 });
    expect(visit.event({})[1]).toMatchObject({ version: 4, events: 1, visit_engagement_ms: 1500 });
  });

  it('counts events sent before the first pageview into the visit, and writes nothing for them', () => {
    const { visit } = createVisitTracker({ timeoutMs: 30 * MINUTE }).touch('site', 'v1', 0);
    expect(visit.event({ engagementMs: 300 })).toEqual([]);
    expect(visit.event({})).toEqual([]);
    expect(visit.pageview(hit('2026-01-01T10:00:00.000Z', '/'))).toEqual([expect.objectContaining({ sign: 1, version: 1, events: 1, visit_engagement_ms: 300 })]);
  });

  it('keeps the day and entry of the first pageview received when an earlier one arrives late, and lengthens the visit', () => {
    const { visit } = createVisitTracker({ timeoutMs: 30 * MINUTE }).touch('site', 'v1', 0);
    visit.pageview(hit('2026-01-01T10:05:00.000Z', '/b'));
    const [, late] = visit.pageview(hit('2026-01-01T10:01:00.000Z', '/a'));
    expect(late).toMatchObject({ start: '2026-01-01T10:05:00.000Z', first_ts: '2026-01-01T10:01:00.000Z', last_ts: '2026-01-01T10:05:00.000Z', entry_page: '/b', exit_page: '/b', pages: ['/a', '/b'] });
  });

  it('ends a visit whose rows could not be stored: the next hit starts a new visit that cancels nothing', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const failed = visits.touch('site', 'v1', 0);
    failed.visit.pageview(hit('2026-01-01T10:00:00.000Z', '/'));
    failed.visit.abandon();
    const next = visits.touch('site', 'v1', 1000);
    expect([next.isEntry, next.visitId === failed.visitId]).toEqual([true, false]);
    expect(next.visit.pageview(hit('2026-01-01T10:00:01.000Z', '/'))).toEqual([expect.objectContaining({ sign: 1, version: 1 })]);
  });
});

describe('the pages a visit lists', () => {
  it('lists pages and hostnames in code-unit order with their hits, whatever order they come in, and never changes a row it gave', () => {
    const { visit } = createVisitTracker({ timeoutMs: 30 * MINUTE }).touch('site', 'v1', 0);
    const view = (path: string, hostname = 'example.com', second = 0) =>
      visit.pageview({ ts: `2026-01-01T10:00:${String(second).padStart(2, '0')}.000Z`, columns: { site_id: 's', session_id: '1', visitor_id: '7', path, hostname } });
    const rows = ['/m', '/b', '/z', '/b', '/B', '/é', '/a', '/m'].map((path, i) => view(path, i % 3 === 0 ? 'www.example.com' : 'example.com', i));
    const states = rows.map((written) => written[written.length - 1]);
    const snapshot = JSON.stringify(states);
    const last = states[states.length - 1];
    expect([last.pages, last.page_hits]).toEqual([['/B', '/a', '/b', '/m', '/z', '/é'], [1, 1, 2, 2, 1, 1]]);
    expect([last.hostnames, last.hostname_hits]).toEqual([['example.com', 'www.example.com'], [5, 3]]);
    // Each pageview cancels exactly the state written before it.
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i][0]).toMatchObject({ site_id: states[i - 1].site_id, session_id: states[i - 1].session_id, version: states[i - 1].version, sign: -1, $reference: 1 });
    }
    view('/new', 'example.com', 30);
    expect(JSON.stringify(states)).toBe(snapshot);
  });

  it(`stop growing at ${MAX_VISIT_PAGES} distinct pages, while every pageview still counts`, () => {
    const { visit } = createVisitTracker({ timeoutMs: 30 * MINUTE }).touch('site', 'v1', 0);
    let last: Record<string, unknown> = {};
    for (let i = 0; i < MAX_VISIT_PAGES + 10; i++) {
      const rows = visit.pageview({ ts: `2026-01-01T10:00:${String(i % 60).padStart(2, '0')}.000Z`, columns: { site_id: 's', session_id: '1', visitor_id: '7', path: `/p${String(i).padStart(3, '0')}`, hostname: 'example.com' } });
      last = rows[rows.length - 1];
    }
    const again = visit.pageview({ ts: '2026-01-01T10:01:00.000Z', columns: { site_id: 's', session_id: '1', visitor_id: '7', path: '/p000', hostname: 'example.com' } });
    last = again[again.length - 1];
    expect((last.pages as string[]).length).toBe(MAX_VISIT_PAGES);
    expect([last.visit_pageviews, (last.page_hits as number[])[0], last.hostname_hits]).toEqual([MAX_VISIT_PAGES + 11, 2, [MAX_VISIT_PAGES + 11]]);
  });
});

describe('idle visits', () => {
  it('are dropped with their visit once nobody touched them for the timeout (wall clock), so replayed old times do not age them', () => {
    let now = 1_000_000;
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE, clock: () => now });
    const replayed = visits.touch('site', 'old', Date.UTC(2024, 0, 1));
    visits.touch('site', 'a', now);
    now += 20 * MINUTE;
    visits.touch('site', 'b', now);
    expect(visits.touch('site', 'old', Date.UTC(2024, 0, 1, 0, 5)).visitId).toBe(replayed.visitId);
    now += 15 * MINUTE; // 'a' is 35 minutes idle, 'b' and 'old' 15
    visits.touch('site', 'c', now);
    expect(visits.size()).toBe(3);
    now += 31 * MINUTE;
    visits.touch('site', 'd', now);
    expect(visits.size()).toBe(1);
  });
});
