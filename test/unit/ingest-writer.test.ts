// The ingest writer's contract with the stored-batch listener (goal conversions and their webhook
// events hang off it): a batch is acknowledged only after its rows are stored AND the listener has
// finished, and a listener failure makes the writer store the batch again (same token) and call
// again, so what the listener records is never lost to a failure or a crash.
import { describe, expect, it } from '@jest/globals';
import type { Journal, JournalBatch } from '../../lib/ingest/journal.ts';
import type { JournalRecord } from '../../lib/ingest/pipeline.ts';
import { currentLayout } from '../../lib/ingest/row-layouts.ts';
import { encodeRecord } from '../../lib/ingest/sink.ts';
import { type VisitState, visitRow, withPageview } from '../../lib/ingest/visits.ts';
import { createIngestWriter, type WritableRecord } from '../../lib/ingest/writer.ts';
import { silentLog } from '../../lib/log.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';

const TEAM = '22222222-2222-4222-8222-222222222222';
const record = (n: number): JournalRecord => ({ table: 'hits', team: TEAM, row: { hit_id: `h${n}` } });

/** An in-memory journal that hands out one batch at a time and logs what happens to it. */
function memoryJournal(records: WritableRecord[], steps: string[]): Journal<WritableRecord> {
  let pending = [...records];
  let outstanding: JournalBatch<WritableRecord> | null = null;
  return {
    async append() {
      throw new Error('not used');
    },
    async next(maxRecords) {
      if (outstanding) return outstanding;
      if (pending.length === 0) return null;
      const taken = pending.slice(0, maxRecords);
      const batch: JournalBatch<WritableRecord> = {
        records: taken,
        token: 'batch-1',
        async ack() {
          steps.push('ack');
          pending = pending.slice(taken.length);
          outstanding = null;
        },
      };
      outstanding = batch;
      return batch;
    },
    pendingBytes: () => 0,
    pendingRecords: () => pending.length,
    stats: () => ({ appends: 0, fsyncs: 0, segments: 0 }),
    async close() {},
  };
}

/** A row as the store reads an inserted line: an object, or values in the order of the insert's columns (its nulls are the columns' defaults, left out here). */
function storedRow(line: string, columns: readonly string[] | undefined): Record<string, unknown> {
  const parsed = JSON.parse(line) as Record<string, unknown> | unknown[];
  if (!columns) return parsed as Record<string, unknown>;
  return Object.fromEntries(columns.map((column, i) => [column, (parsed as unknown[])[i]]).filter(([, value]) => value !== null));
}

function recordingStore(steps: string[], tokens: string[], lines: string[] = [], rows: Record<string, unknown>[] = []): AnalyticsStore {
  return {
    tenantDatabase: (team: string) => `tenant_${team.replaceAll('-', '')}`,
    async ensureTenant(team: string) {
      return `tenant_${team.replaceAll('-', '')}`;
    },
    async insertLines(_table: string, inserted: string[], options: { dedupToken?: string; columns?: readonly string[] }) {
      steps.push('insert');
      tokens.push(options.dedupToken ?? '');
      lines.push(...inserted);
      rows.push(...inserted.map((line) => storedRow(line, options.columns)));
    },
  } as unknown as AnalyticsStore;
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A writer over `records` that logs inserts and acks into `steps` and tokens into `tokens`, and runs until the batch is acknowledged. */
async function writeUntilAcked(records: WritableRecord[], onStored: (records: readonly JournalRecord[], steps: string[]) => Promise<void>) {
  const steps: string[] = [];
  const tokens: string[] = [];
  const lines: string[] = [];
  const rows: Record<string, unknown>[] = [];
  const journal = memoryJournal(records, steps);
  const writer = createIngestWriter({
    journal,
    analytics: () => recordingStore(steps, tokens, lines, rows),
    log: silentLog,
    batchSize: 10,
    flushMs: 10,
    onStored: (stored) => onStored(stored, steps),
  });
  writer.start();
  await until(() => steps.includes('ack'));
  await writer.stop(1000);
  return { steps, tokens, lines, rows, journal, writer };
}

describe('createIngestWriter with a stored-batch listener', () => {
  it('acknowledges a batch only after the listener has finished with it', async () => {
    const { steps } = await writeUntilAcked([record(1), record(2)], async (records, log) => {
      log.push(`listener:${records.length}:start`);
      await new Promise((resolve) => setTimeout(resolve, 30));
      log.push('listener:end');
    });
    expect(steps).toEqual(['insert', 'listener:2:start', 'listener:end', 'ack']);
  });

  it('stores the batch again with the same token and calls again when the listener fails', async () => {
    const seen: string[][] = [];
    let failures = 1;
    const { steps, tokens, journal, writer } = await writeUntilAcked([record(1), record(2), record(3)], async (records) => {
      seen.push(records.map((r) => String(r.row.hit_id)));
      if (failures-- > 0) throw new Error('metadata store unavailable');
    });
    expect(steps).toEqual(['insert', 'insert', 'ack']);
    expect(tokens[0]).toBe(tokens[1]);
    expect(seen).toEqual([
      ['h1', 'h2', 'h3'],
      ['h1', 'h2', 'h3'],
    ]);
    expect(writer.stats()).toMatchObject({ batches: 1, inserted: 3, failures: 1 });
    expect(journal.pendingRecords()).toBe(0);
  });
});

describe('createIngestWriter rows', () => {
  it('inserts the line a record already carries as is, and encodes the row of one without', async () => {
    const event = (n: number): JournalRecord => ({ table: 'events', team: TEAM, row: { event_id: `e${n}` } });
    const carried = { ...event(1), line: '{"event_id":"e1","encoded":"once"}' };
    const { lines } = await writeUntilAcked([carried, event(2)], async () => undefined);
    expect(lines).toEqual(['{"event_id":"e1","encoded":"once"}', '{"event_id":"e2"}']);
  });

  it("inserts hits as values in their layout's columns: a line in the current layout as is, an object line of an older journal encoded again from its row", async () => {
    const hitColumns = currentLayout('hits')!.columns;
    const inLayout = { ...record(1), line: JSON.stringify(hitColumns.map((column) => (column === 'hit_id' ? 'h1' : null))), layout: currentLayout('hits')!.version };
    const older = { ...record(2), line: '{"hit_id":"h2"}' };
    const { lines, rows } = await writeUntilAcked([inLayout, older, record(3)], async () => undefined);
    expect(lines[0]).toBe(inLayout.line);
    expect(rows).toEqual([{ hit_id: 'h1' }, { hit_id: 'h2' }, { hit_id: 'h3' }]);
  });

  it('leaves out the visit states written and cancelled again within the batch, and reports every record as stored', async () => {
    const state = (session: string, version: number, sign: 1 | -1): WritableRecord => ({ table: 'visits', team: TEAM, row: { site_id: 's', session_id: session, version, sign } });
    // A state carried as a line still says which state it is.
    const carried = { ...state('a', 2, 1), line: '{"session_id":"a","version":2,"sign":1}', visitState: { key: 's|a|2', sign: 1 } };
    const batch = [state('a', 1, -1), carried, record(1), state('a', 2, -1), state('a', 3, 1), state('b', 1, 1), state('a', 3, -1), state('a', 4, 1)];
    const { rows, writer } = await writeUntilAcked(batch, async () => undefined);
    expect(rows).toEqual([
      { hit_id: 'h1' },
      { site_id: 's', session_id: 'a', version: 1, sign: -1 },
      { site_id: 's', session_id: 'b', version: 1, sign: 1 },
      { site_id: 's', session_id: 'a', version: 4, sign: 1 },
    ]);
    expect(writer.stats()).toMatchObject({ batches: 1, inserted: 8 });
  });
});

describe('createIngestWriter and cancellations by reference, in a journal of an earlier version', () => {
  const SITE = '6d1f4b2e-8f0a-4c55-9d0e-1b2c3d4e5f60';
  /**
   * A visit's rows as an earlier version journaled them with its hits: each state, and before
   * each but the first the cancellation of the one before by reference; encoded as the
   * single-node sink does.
   */
  function visitRows(pageviews: number): WritableRecord[] {
    const records: WritableRecord[] = [];
    let state: VisitState | null = null;
    for (let i = 0; i < pageviews; i++) {
      const columns = { site_id: SITE, session_id: '42', visitor_id: '7', path: `/p${i}`, hostname: 'example.com', country: 'NL' };
      if (state) records.push(encodeRecord({ table: 'visits', team: TEAM, row: { site_id: SITE, session_id: '42', sign: -1, version: i, start: state.start, $reference: 1 } }));
      state = withPageview(state, { events: 0, engagementMs: 0 }, { ts: `2026-11-22T10:0${i}:00.000Z`, columns });
      records.push(encodeRecord({ table: 'visits', team: TEAM, row: visitRow(state, 1, i + 1) }));
    }
    return records;
  }

  /** Runs a writer over `records` in batches of `batchSize` until all are acknowledged; `stored` answers its reads of the store. */
  async function writeAll(records: WritableRecord[], batchSize: number, stored: Record<string, unknown>[] = []) {
    const inserts: Record<string, unknown>[][] = [];
    const queries: Record<string, unknown>[] = [];
    let pending = [...records];
    let batches = 0;
    const journal = {
      ...memoryJournal([], []),
      async next(maxRecords: number) {
        if (pending.length === 0) return null;
        const taken = pending.slice(0, maxRecords);
        const token = `batch-${++batches}`;
        const ack = async () => {
          pending = pending.slice(taken.length);
        };
        return { records: taken, token, ack };
      },
      pendingRecords: () => pending.length,
    } as Journal<WritableRecord>;
    const store = {
      tenantDatabase: () => 'tenant_x',
      ensureTenant: async () => 'tenant_x',
      async insertLines(_table: string, lines: string[], options: { columns?: readonly string[] }) {
        inserts.push(lines.map((line) => storedRow(line, options.columns)));
      },
      async query(_sql: string, params: Record<string, unknown>) {
        queries.push(params);
        return stored;
      },
    } as unknown as AnalyticsStore;
    const writer = createIngestWriter({ journal, analytics: () => store, log: silentLog, batchSize, flushMs: 5 });
    writer.start();
    await until(() => pending.length === 0);
    await writer.stop(1000);
    return { inserts, queries };
  }

  it('cancels a state stored by an earlier batch with that very row, sign -1, without reading the store', async () => {
    const records = visitRows(3); // state 1 | reference 1, state 2 | reference 2, state 3
    const { inserts, queries } = await writeAll(records, 1);
    const stored = inserts.flat();
    expect(stored.map((row) => [row.version, row.sign])).toEqual([
      [1, 1],
      [1, -1],
      [2, 1],
      [2, -1],
      [3, 1],
    ]);
    expect(stored[1]).toEqual({ ...stored[0], sign: -1 });
    expect(stored[3]).toEqual({ ...stored[2], sign: -1 });
    expect(stored.some((row) => '$reference' in row)).toBe(false);
    expect(queries).toEqual([]);
  });

  it("reads the cancelled state back from the store when it does not remember it (after a restart), and leaves out one the store no longer has", async () => {
    const records = visitRows(3).slice(3); // a new writer starts at reference 2, state 3
    const inStore = { site_id: SITE, session_id: '42', sign: 1, version: 2, visitor_id: '7', start: '2026-11-22 10:00:00.000', pages: ['/p0', '/p1'], page_hits: [1, 1], country: 'NL' };
    const found = await writeAll(records, 10, [inStore]);
    expect(found.inserts).toEqual([[{ ...inStore, sign: -1 }, expect.objectContaining({ version: 3, sign: 1, pages: ['/p0', '/p1', '/p2'] })]]);
    expect(found.queries).toEqual([expect.objectContaining({ sites: [SITE], days: ['2026-11-22'], visits: [42n], versions: [2] })]);
    const gone = await writeAll(records, 10, []);
    expect(gone.inserts).toEqual([[expect.objectContaining({ version: 3, sign: 1 })]]);
  });
});

describe('createIngestWriter and the visits it derives from hits', () => {
  const SITE = '6d1f4b2e-8f0a-4c55-9d0e-1b2c3d4e5f60';
  const hit = (minute: number, path: string): WritableRecord =>
    encodeRecord({
      table: 'hits',
      team: TEAM,
      derivesVisit: true,
      row: Object.fromEntries(
        currentLayout('hits')!.columns.map((column) => [column, { ts: `2026-11-22T10:0${minute}:00.000Z`, site_id: SITE, session_id: '42', visitor_id: '7', path, hostname: 'example.com', is_entry: minute === 0 ? 1 : 0 }[column] ?? '']),
      ),
    });

  /**
   * A store that keeps each insert token once, as ClickHouse does, and answers the latest stored
   * state of a visit; `failAfterVisits` makes that many visits inserts fail after storing (the
   * answer lost on the way back).
   */
  function deduplicatingStore(failAfterVisits = 0) {
    const tokens = new Set<string>();
    const visits: Record<string, unknown>[] = [];
    let reads = 0;
    const store = {
      tenantDatabase: () => 'tenant_x',
      ensureTenant: async () => 'tenant_x',
      async insertLines(table: string, lines: string[], options: { dedupToken: string; columns?: readonly string[] }) {
        if (tokens.has(options.dedupToken)) return;
        tokens.add(options.dedupToken);
        if (table !== 'visits') return;
        visits.push(...lines.map((line) => storedRow(line, options.columns)));
        if (failAfterVisits-- > 0) throw new Error('connection reset');
      },
      async query() {
        reads++;
        const latest = new Map<string, Record<string, unknown>>();
        for (const row of visits) if (row.sign === 1 && Number(latest.get(String(row.session_id))?.version ?? 0) < Number(row.version)) latest.set(String(row.session_id), row);
        return [...latest.values()];
      },
    } as unknown as AnalyticsStore;
    /** What the dashboard reads: pageviews summed with sign, per visit. */
    const pageviews = () => visits.reduce((sum, row) => sum + Number(row.sign) * Number(row.visit_pageviews), 0);
    return { store, visits, pageviews, reads: () => reads };
  }

  /** A journal of `batches` handed out in turn, each with its own token. */
  function batchJournal(batches: { token: string; records: WritableRecord[] }[]): Journal<WritableRecord> {
    let at = 0;
    return {
      ...memoryJournal([], []),
      async next() {
        const batch = batches[at];
        if (!batch) return null;
        return {
          ...batch,
          async ack() {
            at = batches.indexOf(batch) + 1;
          },
        };
      },
      pendingRecords: () => batches.slice(at).reduce((sum, batch) => sum + batch.records.length, 0),
    } as Journal<WritableRecord>;
  }

  async function drain(journal: Journal<WritableRecord>, store: AnalyticsStore) {
    const writer = createIngestWriter({ journal, analytics: () => store, log: silentLog, batchSize: 1, flushMs: 5 });
    writer.start();
    await until(() => journal.pendingRecords() === 0);
    await writer.stop(1000);
  }

  const first = { token: 'batch-1', records: [hit(0, '/')] };
  const second = { token: 'batch-2', records: [hit(1, '/a')] };
  const third = { token: 'batch-3', records: [hit(2, '/b')] };

  it('stores one visit of every pageview, reading it back only after the first batch (which may have been stored before)', async () => {
    const stored = deduplicatingStore();
    await drain(batchJournal([first, second, third]), stored.store);
    expect(stored.pageviews()).toBe(3);
    expect(stored.visits.at(-1)).toMatchObject({ sign: 1, version: 3, visit_pageviews: 3, pages: ['/', '/a', '/b'] });
    expect(stored.reads()).toBe(1);
  });

  it('counts a batch replayed after a crash once, though the store had its visit already', async () => {
    const stored = deduplicatingStore();
    await drain(batchJournal([first, second]), stored.store);
    // The process died before acknowledging the second batch: the next one replays it, then goes on.
    await drain(batchJournal([second, third]), stored.store);
    expect(stored.pageviews()).toBe(3);
    expect(stored.visits.at(-1)).toMatchObject({ sign: 1, version: 3, visit_pageviews: 3, pages: ['/', '/a', '/b'] });
  });

  it('counts a batch written again after an insert whose answer was lost once', async () => {
    const stored = deduplicatingStore(2);
    await drain(batchJournal([first, second, third]), stored.store);
    expect(stored.pageviews()).toBe(3);
    expect(stored.visits.at(-1)).toMatchObject({ sign: 1, version: 3, visit_pageviews: 3 });
  });
});
