// Drains the journal into the analytics store: a batch when enough events wait or the flush
// interval passes, one insert per tenant table with a token derived from the batch, so a batch
// retried after a failure or replayed after a crash is stored once. The visits rows are derived
// here from the batch's hits and events (lib/ingest/visit-states.ts). Acks only after every insert
// and after the stored-batch listener has finished with it.
import type { Log } from '../log.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { type EncodedLine, encodeCompactRow, encodeRow } from '../stores/analytics/transport.ts';
import type { Journal, JournalBatch } from './journal.ts';
import type { JournalRecord } from './pipeline.ts';
import { currentLayout, type RowLayout, type ScratchRows } from './row-layouts.ts';
import type { LineRing } from './line-ring.ts';
import { cancellationLine, type DerivedVisits } from './visit-states.ts';
import { visitStatesInWorker } from './visit-states-worker.ts';
import { type VisitStateKey, visitStateKey, withoutPassingStates } from './visits.ts';

/**
 * Visit states the writer remembers having stored, so that the next batch builds on them (and, in
 * a journal of an earlier version, a cancellation journaled by reference gets its row) without
 * asking the store. The oldest are forgotten past this many, and visits once idle for the visit
 * timeout; a forgotten one, or any after a restart or a leader change, is read back from the store.
 */
const REMEMBERED_STATES = 100_000;
const DEFAULT_VISIT_IDLE_MS = 30 * 60_000;

const VISIT_LAYOUT = currentLayout('visits') as RowLayout;

const unique = <T>(values: Iterable<T>): T[] => [...new Set(values)];

/** The stored states (sign 1) that `references` cancel, by state key, read from the store. */
async function storedStates(analytics: AnalyticsStore, database: string, references: readonly Record<string, unknown>[]): Promise<Map<string, Record<string, unknown>>> {
  const rows = await analytics.query(
    `SELECT * FROM {db:Identifier}.visits
      WHERE site_id IN {sites:Array(UUID)} AND toDate(start) IN {days:Array(Date)} AND session_id IN {visits:Array(UInt64)}
        AND version IN {versions:Array(UInt32)} AND sign = 1`,
    {
      db: database,
      sites: unique(references.map((r) => r.site_id)),
      days: unique(references.map((r) => String(r.start).slice(0, 10))),
      // A UInt64 binds from a bigint (its decimal text does not parse inside an array parameter).
      visits: unique(references.map((r) => String(r.session_id))).map((id) => BigInt(id)),
      versions: unique(references.map((r) => r.version)),
    },
  );
  return new Map(rows.map((row) => [visitStateKey(row).key, row]));
}

/**
 * A record as the writer takes it: `line`, when present, is its row already encoded, by
 * encodeCompactRow in the version `layout` of its table's layout (lib/ingest/row-layouts.ts), or
 * by encodeRow when `layout` is absent, and `encodedLine` the same line as the insert takes it (its
 * text, or where its bytes are); `visitState`, when present, a visits row's state key (else
 * it is read from the row); `readRow`, when present, parses the row from the line without keeping it
 * (into the scratch row for its columns, when given one).
 */
export type WritableRecord = JournalRecord & {
  line?: string;
  encodedLine?: EncodedLine;
  layout?: number;
  visitState?: VisitStateKey;
  readRow?(scratch?: ScratchRows): Record<string, unknown>;
  /** Where the line's bytes wait in the journal's line ring (-1: its text is kept instead), and how many they are. */
  ringPosition?: number;
  lineBytes?: number;
};

export interface IngestWriter {
  start(): void;
  /** Wake early: new records were appended. */
  notify(): void;
  /** Stops after writing everything pending (or at the deadline); the rest stays in the journal. */
  stop(deadlineMs: number): Promise<void>;
  stats(): { inserted: number; batches: number; failures: number };
}

export interface WriterOptions {
  journal: Journal<WritableRecord>;
  analytics: () => AnalyticsStore;
  log: Log;
  batchSize: number;
  flushMs: number;
  /**
   * Called with a batch's records once they are stored, before the batch is acknowledged (goal
   * conversions are judged and queued as webhook events here). The writer waits for it, so what it
   * records is never lost to a crash: if it fails (or the process dies first) the batch is written
   * again, which the insert tokens make a no-op, and reported again. Listeners must therefore be
   * idempotent, and should throw only for failures worth retrying (a store that is unavailable).
   */
  onStored?: (records: readonly JournalRecord[]) => void | Promise<void>;
  /** Called once a batch is acknowledged: its records are never handed out again. */
  onAcknowledged?: (records: readonly JournalRecord[]) => void;
  /** The visit timeout: how long the writer remembers a visit nobody touched (default 30 minutes). */
  visitIdleMs?: number;
  /** The ring the journal keeps its records' lines in, if it does: visit states read them there. */
  lineRing?: LineRing;
}

const MAX_BACKOFF_MS = 5_000;

const stateOf = (record: WritableRecord) => record.visitState ?? visitStateKey(record.row);
/**
 * A record's line as its table is inserted: in the table's current layout when it has one (a
 * record journaled in another layout, or as an object by an older version, is encoded again from
 * its row), else as an object.
 */
function lineOf(record: WritableRecord): EncodedLine {
  const layout = currentLayout(record.table);
  const line = record.encodedLine ?? record.line;
  if (layout === undefined) return line ?? encodeRow(record.row);
  return line !== undefined && record.layout === layout.version ? line : encodeCompactRow(layout.columns, record.row);
}

/** lineOf's line as text: the visit states the writer remembers are kept as text, for their cancellations. */
function textLineOf(record: WritableRecord): string {
  const line = lineOf(record);
  // Bytes come from the record's own line, whose text it has.
  return typeof line === 'string' ? line : record.line!;
}

export function createIngestWriter(options: WriterOptions): IngestWriter {
  const { journal, log, batchSize, flushMs } = options;
  const ensured = new Set<string>();
  const remembered = new Map<string, string>();
  const visitStates = visitStatesInWorker({ idleMs: options.visitIdleMs ?? DEFAULT_VISIT_IDLE_MS, maxVisits: REMEMBERED_STATES, ring: options.lineRing, log });
  let running = false;
  let stopping = false;
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  const stats = { inserted: 0, batches: 0, failures: 0 };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });

  /**
   * Stores a batch: one insert per team and table. Answers the visits it derived from the batch's
   * hits and events, which run() keeps or forgets once the batch is acknowledged.
   */
  async function write(batch: JournalBatch<WritableRecord>): Promise<DerivedVisits[]> {
    const analytics = options.analytics();
    // By team, then table (a batch's records are mostly of one or two teams), with the hits and
    // events each team's visits are derived from, in journal order.
    const teams = new Map<string, { tables: Map<string, WritableRecord[]>; visitSources: WritableRecord[] }>();
    for (const record of batch.records) {
      let team = teams.get(record.team);
      if (team === undefined) {
        team = { tables: new Map(), visitSources: [] };
        teams.set(record.team, team);
      }
      const group = team.tables.get(record.table);
      if (group) group.push(record);
      else team.tables.set(record.table, [record]);
      if (record.derivesVisit) team.visitSources.push(record);
    }
    const derived: DerivedVisits[] = [];
    for (const [team, { tables, visitSources }] of teams) {
      const database = analytics.tenantDatabase(team);
      if (!ensured.has(team)) {
        await analytics.ensureTenant(team);
        ensured.add(team);
      }
      const insert = (table: string, lines: EncodedLine[]) =>
        analytics.insertLines(table, lines, { database, dedupToken: `${batch.token}:${team}.${table}`, columns: currentLayout(table)?.columns });
      for (const [table, group] of tables) if (table !== 'visits') await insert(table, group.map(lineOf));
      // Visit rows journaled by an earlier version: a visit's states written and cancelled again
      // within the batch (a burst of its hits) would only cancel out in the store, so they are not
      // sent. The batch's records alone decide what is dropped, so a replayed batch sends the same.
      const journaled = tables.has('visits') ? withoutPassingStates(tables.get('visits')!, stateOf) : [];
      const journaledLines = journaled.length > 0 ? await visitLines(analytics, database, journaled) : [];
      const visits = visitSources.length > 0 ? await visitStates.derive(analytics, database, visitSources) : undefined;
      const lines = [...journaledLines.filter((line) => line !== undefined), ...(visits?.lines ?? [])];
      if (lines.length > 0) await insert('visits', lines);
      if (journaled.length > 0) remember(journaled, journaledLines);
      if (visits) derived.push(visits);
    }
    return derived;
  }

  /**
   * The lines of a batch's visit rows, with each cancellation by reference filled in from the
   * remembered states or the store. One whose state the store no longer has is left out (undefined):
   * that happens when a batch already stored is written again after a crash (the insert token makes
   * that write a no-op) and a merge has meanwhile dropped the cancelled pair.
   */
  async function visitLines(analytics: AnalyticsStore, database: string, records: readonly WritableRecord[]): Promise<(string | undefined)[]> {
    const lines: (string | undefined)[] = [];
    const unresolved: number[] = [];
    records.forEach((record, i) => {
      const state = stateOf(record);
      const stored = state.reference ? remembered.get(state.key) : undefined;
      lines[i] = state.reference ? (stored === undefined ? undefined : cancellationLine(stored)) : textLineOf(record);
      if (lines[i] === undefined) unresolved.push(i);
    });
    if (unresolved.length === 0) return lines;
    const found = await storedStates(analytics, database, unresolved.map((i) => records[i].row));
    let missing = 0;
    for (const i of unresolved) {
      const row = found.get(stateOf(records[i]).key);
      if (row) lines[i] = encodeCompactRow(VISIT_LAYOUT.columns, { ...row, sign: -1 });
      else missing++;
    }
    if (missing > 0) log.info({ database, cancellations: missing }, 'ingest writer: states already cancelled in the store; their cancellations are left out');
    return lines;
  }

  /** After an insert: the states it stored are remembered, the ones it cancelled forgotten. */
  function remember(records: readonly WritableRecord[], lines: readonly (string | undefined)[]): void {
    records.forEach((record, i) => {
      const state = stateOf(record);
      remembered.delete(state.key);
      const line = lines[i];
      if (state.sign === 1 && line !== undefined) remembered.set(state.key, line);
    });
    for (const key of remembered.keys()) {
      if (remembered.size <= REMEMBERED_STATES) break;
      remembered.delete(key);
    }
  }

  async function run(): Promise<void> {
    let backoff = 100;
    let batch: JournalBatch<WritableRecord> | null = null;
    // The first batch may be the one outstanding when the last writer stopped, stored already;
    // so may a batch written again after a failure (see lib/ingest/visit-states.ts).
    let mayBeStored = true;
    while (running) {
      if (!batch) {
        const pending = journal.pendingRecords();
        if (pending === 0) {
          if (stopping) return;
          await sleep(flushMs);
          continue;
        }
        // A partial batch waits for more, at most one flush interval.
        if (pending < batchSize && !stopping) await sleep(flushMs);
        batch = await journal.next(batchSize);
        if (!batch) continue;
      }
      const current = batch;
      try {
        const visits = await write(current);
        await options.onStored?.(current.records);
        await current.ack();
        options.onAcknowledged?.(current.records);
        for (const derived of visits) {
          if (mayBeStored) derived.forget();
          else derived.keep();
        }
        mayBeStored = false;
        stats.inserted += current.records.length;
        stats.batches++;
        batch = null;
        backoff = 100;
      } catch (err) {
        mayBeStored = true;
        // The batch stays outstanding and is retried as is: same records, same token.
        stats.failures++;
        log.warn({ err: (err as Error).message, records: current.records.length, retryMs: backoff }, 'ingest writer: storing a batch failed, retrying');
        await sleep(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run().catch((err) => log.error({ err }, 'ingest writer stopped on an unexpected error'));
    },
    notify() {
      if (journal.pendingRecords() >= batchSize) wake?.();
    },
    async stop(deadlineMs) {
      if (!running) return;
      stopping = true;
      wake?.();
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
      await Promise.race([loop, deadline]);
      running = false;
      wake?.();
      await Promise.race([loop, new Promise<void>((resolve) => setTimeout(resolve, 1000).unref())]);
      await visitStates.close();
    },
    stats: () => ({ ...stats }),
  };
}
