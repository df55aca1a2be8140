// The writer's visit states on their worker thread: how a batch crosses to it, and what happens
// when the worker or the store fails. What the states are is specified in ingest-visit-states.test.ts.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, afterEach, describe, expect, it } from '@jest/globals';
import { LineRing } from '../../lib/ingest/line-ring.ts';
import type { JournalRecord } from '../../lib/ingest/pipeline.ts';
import { currentLayout, rowOfValues } from '../../lib/ingest/row-layouts.ts';
import { encodeRecord, type EncodedRecord } from '../../lib/ingest/sink.ts';
import { createVisitStateDeriver, readStoredStates, type VisitStates } from '../../lib/ingest/visit-states.ts';
import { LINE_AS_TEXT, ROW_AS_OBJECT, sourceBatch, visitStatesInWorker, type VisitStatesWorkerOptions } from '../../lib/ingest/visit-states-worker.ts';
import type { WritableRecord } from '../../lib/ingest/writer.ts';
import { silentLog } from '../../lib/log.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { FAILING_VISIT_THREAD, failingVisitThreadMarker } from '../support/failing-visit-thread.ts';

const SITE = '6d1f4b2e-8f0a-4c55-9d0e-1b2c3d4e5f60';
const VISIT_COLUMNS = currentLayout('visits')!.columns;
const OPTIONS = { idleMs: 30 * 60_000, maxVisits: 1000, log: silentLog };

const hit = (second: number, path: string, extra: Record<string, unknown> = {}): JournalRecord => ({
  table: 'hits',
  team: 'team',
  derivesVisit: true,
  row: {
    ...Object.fromEntries(currentLayout('hits')!.columns.map((column) => [column, ''])),
    ts: `2026-01-01T10:00:${String(second).padStart(2, '0')}.000Z`,
    site_id: SITE,
    session_id: '42',
    visitor_id: '7',
    path,
    hostname: 'example.com',
    is_entry: 0,
    screen_width: 0,
    engagement_ms: 0,
    ...extra,
  },
});
const event = (name: string): JournalRecord => ({ table: 'events', team: 'team', derivesVisit: true, row: { ts: '2026-01-01T10:00:30.000Z', site_id: SITE, session_id: '42', visitor_id: '7', name, props: {} } });

/** Encoded as the single-node sink journals it, its line moved into `ring`. */
function inRing(record: JournalRecord, ring: LineRing): EncodedRecord {
  const encoded = encodeRecord(record);
  const bytes = Buffer.from(encoded.line);
  encoded.keepLineIn(ring, bytes, 0, bytes.length);
  return encoded;
}

function storeWith(stored: Record<string, unknown>[] = [], failure?: Error) {
  const reads: Record<string, unknown>[] = [];
  const analytics = {
    async query(_sql: string, params: Record<string, unknown>) {
      reads.push(params);
      if (failure) throw failure;
      return stored;
    },
  } as unknown as AnalyticsStore;
  return { analytics, reads };
}

const rowsOf = (lines: string[]) => lines.map((line) => rowOfValues(VISIT_COLUMNS, JSON.parse(line) as unknown[]));

const opened: VisitStates[] = [];
const openWorker = (options: Partial<VisitStatesWorkerOptions> = {}) => {
  const states = visitStatesInWorker({ ...OPTIONS, ...options });
  opened.push(states);
  return states;
};
afterEach(async () => {
  await Promise.all(opened.splice(0).map((states) => states.close()));
});

describe('sourceBatch', () => {
  it("sends a line in the ring as its place there, a line kept as text as its text, and a row without a line as the row", () => {
    const ring = new LineRing(4096);
    const placed = inRing(hit(0, '/', { is_entry: 1 }), ring);
    const asText = encodeRecord(hit(1, '/a'));
    const asRow = event('signup');
    const { batch, transfer } = sourceBatch([placed, asText, asRow], ring);
    expect([...batch.positions]).toEqual([placed.ringPosition, LINE_AS_TEXT, ROW_AS_OBJECT]);
    expect(batch.lengths[0]).toBe(Buffer.byteLength(placed.line));
    expect([...batch.tables]).toEqual([0, 0, 1]);
    expect([...batch.layouts]).toEqual([currentLayout('hits')!.version, currentLayout('hits')!.version, 0]);
    expect(batch.texts).toEqual([asText.line]);
    expect(batch.rows).toEqual([asRow.row]);
    expect(transfer).toHaveLength(4);
  });

  it('sends every line as text when the worker has no ring', () => {
    const ring = new LineRing(4096);
    const { batch } = sourceBatch([inRing(hit(0, '/'), ring)], undefined);
    expect([...batch.positions]).toEqual([LINE_AS_TEXT]);
  });

  it('refuses a record of a table visits are not derived from', () => {
    expect(() => sourceBatch([{ table: 'visits', team: 'team', row: {} }], undefined)).toThrow(/hits and events, not from visits/);
  });
});

describe('visit states on a worker thread', () => {
  it('derive from lines read in the shared ring, as text and as rows the same states as on the calling thread', async () => {
    const ring = new LineRing(64 * 1024);
    const batches = [
      [hit(0, '/', { is_entry: 1, referrer: 'google.com' }), hit(1, '/a'), event('signup')],
      [hit(2, '/b'), hit(3, '/a', { session_id: '43', is_entry: 1 })],
    ];
    const { analytics } = storeWith();
    const here = createVisitStateDeriver(OPTIONS);
    const there = openWorker({ ring });
    for (const [i, batch] of batches.entries()) {
      // The first batch's lines wait in the ring, the second's as text and rows.
      const records = i === 0 ? batch.map((record) => inRing(record, ring)) : [encodeRecord(batch[0]), batch[1]];
      const expected = await here.derive(batch, (visits) => readStoredStates(analytics, 'tenant_team', visits));
      const derived = await there.derive(analytics, 'tenant_team', records);
      expect(rowsOf(derived.lines)).toEqual(rowsOf(expected.lines));
      expected.keep();
      derived.keep();
    }
    expect(await there.size()).toBe(2);
  });

  it('fail a batch whose line is in a layout this version does not know, and derive the next', async () => {
    const states = openWorker();
    const { analytics } = storeWith();
    const unknownLayout: WritableRecord = { table: 'hits', team: 'team', derivesVisit: true, row: {}, line: '[]', layout: 99 };
    await expect(states.derive(analytics, 'tenant_team', [unknownLayout])).rejects.toThrow(/layout 99/);
    const next = await states.derive(analytics, 'tenant_team', [hit(0, '/', { is_entry: 1 })]);
    expect(rowsOf(next.lines)).toEqual([expect.objectContaining({ sign: 1, version: 1 })]);
  });

  it("fail a batch when the store cannot be read for a visit they do not know, and read it again for the next", async () => {
    const states = openWorker();
    const down = storeWith([], new Error('store unavailable'));
    await expect(states.derive(down.analytics, 'tenant_team', [hit(5, '/late')])).rejects.toThrow('store unavailable');
    const up = storeWith();
    const next = await states.derive(up.analytics, 'tenant_team', [hit(5, '/late')]);
    expect(rowsOf(next.lines)).toEqual([expect.objectContaining({ sign: 1, version: 1, entry_page: '/late' })]);
    expect(up.reads).toEqual([expect.objectContaining({ visits: [42n] })]);
  });

  describe('when the worker dies', () => {
    const forget = () => rmSync(failingVisitThreadMarker(), { force: true });
    beforeAll(forget);
    afterAll(forget);

    it("fail the batch it held, and derive the next on a new worker that reads the visits it meets from the store", async () => {
      const states = openWorker({ threadModule: FAILING_VISIT_THREAD });
      const { analytics, reads } = storeWith();
      await expect(states.derive(analytics, 'tenant_team', [hit(0, '/', { is_entry: 1 })])).rejects.toThrow(/exited \(code 3\)/);
      const again = await states.derive(analytics, 'tenant_team', [hit(1, '/a')]);
      expect(rowsOf(again.lines)).toEqual([expect.objectContaining({ sign: 1, version: 1, entry_page: '/a' })]);
      expect(reads).toHaveLength(1);
    });
  });
});
