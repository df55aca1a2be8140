// The `visits` rows, derived by the ingest writer from the hits and events it stores: per batch,
// each visit the batch touches gets the cancellation of its stored state (sign -1, that state's
// version) and its new state (sign 1, the next version), inserted with the batch's other rows under
// the batch's token. The request path thus journals a pageview's hit alone, and a visit's state is
// encoded once a batch rather than once a hit.
//
// The writer starts each visit from the state it remembers having stored, or reads it from the
// analytics store (after a restart, a leader change, or once it forgot an idle visit). A hit that is
// its visit's entry starts a new visit without a read. A batch that may have been stored before
// (the first one a writer takes, which can be the one outstanding at a crash, or one retried after
// a failure) is inserted under the same token, so the store keeps what it had; the writer forgets
// that batch's visits afterwards, and reads them back from the store when they come again.
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { encodeCompactRow } from '../stores/analytics/transport.ts';
import type { WritableRecord } from './writer.ts';
import { currentLayout, type RowLayout, rowOfValues, type ScratchRows } from './row-layouts.ts';
import { ORIGIN_COLUMNS, type PendingActivity, type SortedCounts, type VisitState, visitRow, withEvent, withPageview } from './visits.ts';

const VISIT_COLUMNS = (currentLayout('visits') as RowLayout).columns;

/** A visits layout's values begin with site_id, session_id, sign (lib/ingest/row-layouts.ts). */
const STATE_LINE_HEAD = /^(\["[^"\\]*","[^"\\]*",)1,/;

/**
 * The cancellation of a stored state from the state's own line: the same row with sign -1, by
 * rewriting the sign in place, or (a line whose head has another form) by encoding it again.
 */
export function cancellationLine(stateLine: string): string {
  const head = STATE_LINE_HEAD.exec(stateLine);
  if (head) return `${head[1]}-1,${stateLine.slice(head[0].length)}`;
  return encodeCompactRow(VISIT_COLUMNS, { ...rowOfValues(VISIT_COLUMNS, JSON.parse(stateLine) as unknown[]), sign: -1 });
}

/** A visit as the writer last stored it (or as events before its first pageview left it). */
interface StoredVisit {
  /** Null until the visit's first pageview: nothing of it is stored yet. */
  state: VisitState | null;
  /** The stored state's version; 0 when none is stored. */
  version: number;
  /** The stored state's line, as inserted or as the store answered it (its cancellation is that line with sign -1). */
  line?: string;
  /** Events counted before the first pageview. */
  pending: PendingActivity;
  /** Wall-clock time the writer last touched it: what idle visits are forgotten by. */
  touchedAt: number;
}

const NOTHING_STORED = (): StoredVisit => ({ state: null, version: 0, pending: { events: 0, engagementMs: 0 }, touchedAt: 0 });

export interface DerivedVisits {
  /** Per visit whose state changed: the cancellation of its stored state, if one is stored, then its new state. */
  lines: string[];
  /** The lines are in the store: their states are the ones to build on. */
  keep(): void;
  /** The lines may have been stored before (see the head of this file): read these visits back next time. */
  forget(): void;
}

export interface VisitStates {
  /** The visits rows `records` (hits and events of one tenant database, in journal order) make. Remembers nothing until keep(). */
  derive(analytics: AnalyticsStore, database: string, records: readonly WritableRecord[]): Promise<DerivedVisits>;
  /** How many visits are remembered. */
  size(): Promise<number>;
  /** Lets go of what it holds (a worker thread, for the states derived there). */
  close(): Promise<void>;
}

/** A hit or event as derivation reads it: its table, and its row (or a way to parse it when read, see rowOf). */
export type VisitSource = Pick<WritableRecord, 'table' | 'readRow'> & { row?: Record<string, unknown> };

/** The latest stored state of each of `visits` (keys `site|visit`), by key: one read of the store. */
export type StoredStateReader = (visits: ReadonlySet<string>) => Promise<Map<string, Record<string, unknown>>>;

/** The derivation itself, on whichever thread runs it. */
export interface VisitStateDeriver {
  derive(records: readonly VisitSource[], readStored: StoredStateReader): Promise<DerivedVisits>;
  size(): number;
}

const keyOf = (row: Record<string, unknown>) => `${row.site_id}|${row.session_id}`;

/** A store's DateTime64 text (`2026-11-22 10:00:00.000`, UTC) as the ISO string hits carry, which compare in time order. */
function isoTime(value: unknown): string {
  const text = String(value);
  return new Date(text.includes('T') ? text : `${text.replace(' ', 'T')}Z`).toISOString();
}

/** Keys and counts as SortedCounts holds them, in code-unit order (rows written by SQL may list them otherwise). */
function sortedCounts(keys: readonly string[], counts: readonly number[]): SortedCounts {
  const inOrder = keys.every((key, i) => i === 0 || keys[i - 1] < key);
  if (inOrder) return { keys: [...keys], counts: counts.map(Number) };
  const order = keys.map((_, i) => i).sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
  return { keys: order.map((i) => keys[i]), counts: order.map((i) => Number(counts[i])) };
}

/** The running state of a visit from its stored row. */
export function stateOfRow(row: Record<string, unknown>): VisitState {
  const origin: Record<string, string | number> = {};
  for (const column of ORIGIN_COLUMNS) origin[column] = (row[column] as string | number | undefined) ?? '';
  return {
    siteId: String(row.site_id),
    visitId: String(row.session_id),
    visitorId: String(row.visitor_id),
    start: isoTime(row.start),
    firstTs: isoTime(row.first_ts),
    lastTs: isoTime(row.last_ts),
    pageviews: Number(row.visit_pageviews),
    events: Number(row.events),
    engagementMs: Number(row.visit_engagement_ms),
    entryPage: String(row.entry_page),
    exitPage: String(row.exit_page),
    pages: sortedCounts(row.pages as string[], row.page_hits as number[]),
    hostnames: sortedCounts(row.hostnames as string[], row.hostname_hits as number[]),
    origin,
  };
}

/** The latest stored state of each of `visits` (keys `site|visit`), by key. */
export async function readStoredStates(analytics: AnalyticsStore, database: string, visits: ReadonlySet<string>): Promise<Map<string, Record<string, unknown>>> {
  const keys = [...visits].map((key) => key.split('|'));
  const rows = await analytics.query(
    `SELECT * FROM {db:Identifier}.visits
      WHERE site_id IN {sites:Array(UUID)} AND session_id IN {visits:Array(UInt64)} AND sign = 1
      ORDER BY version DESC LIMIT 1 BY site_id, session_id`,
    {
      db: database,
      sites: [...new Set(keys.map(([site]) => site))],
      // A UInt64 binds from a bigint (its decimal text does not parse inside an array parameter).
      visits: [...new Set(keys.map(([, visit]) => visit))].map((id) => BigInt(id)),
    },
  );
  return new Map(rows.map((row) => [keyOf(row), row]));
}

/** A visit's state as a batch folds its hits and events into it. */
interface Folding {
  state: VisitState | null;
  pending: PendingActivity;
  changed: boolean;
}

/**
 * A record's row; parsed for this read alone when the record holds it encoded, into `scratch`'s row
 * for its columns (see EncodedRecord.readRow): valid until the next record is read, so nothing
 * that folding keeps may refer to it.
 */
const rowOf = (record: VisitSource, scratch: ScratchRows) => record.readRow?.(scratch) ?? record.row!;

/** Folds one hit (a pageview) or event into its visit. */
function fold(visit: Folding, table: string, row: Record<string, unknown>): void {
  if (table === 'hits') {
    const started = visit.state === null;
    visit.state = withPageview(visit.state, visit.pending, { ts: String(row.ts), columns: row as Record<string, string | number> });
    // What was pending is in the state now.
    if (started) visit.pending = { events: 0, engagementMs: 0 };
    visit.changed = true;
    return;
  }
  // `$engagement` adds its time; any other event counts as one.
  const engagementMs = row.name === '$engagement' ? Number((row.props as Record<string, string> | undefined)?.engagement_ms ?? 0) : undefined;
  if (visit.state) {
    visit.state = withEvent(visit.state, { engagementMs });
    visit.changed = true;
  } else if (engagementMs === undefined) visit.pending.events++;
  else visit.pending.engagementMs += engagementMs;
}

export interface VisitStatesOptions {
  /** The visit timeout: a visit nobody touched for this long is forgotten. */
  idleMs: number;
  /** The most visits remembered; the least recently touched are forgotten past it. */
  maxVisits: number;
  clock?: () => number;
}

/** The derivation itself; the writer runs it on a worker thread (./visit-states-worker.ts). */
export function createVisitStateDeriver(options: VisitStatesOptions): VisitStateDeriver {
  const clock = options.clock ?? Date.now;
  /** In the order they were last touched, so the idle ones are at the front. */
  const remembered = new Map<string, StoredVisit>();

  function forgetIdle(now: number): void {
    for (const [key, visit] of remembered) {
      if (remembered.size <= options.maxVisits && now - visit.touchedAt <= options.idleMs) break;
      remembered.delete(key);
    }
  }

  return {
    async derive(records, readStored) {
      // Per visit: the state it starts from (remembered, nothing for its entry hit, or read from
      // the store) and the one the batch folds it into.
      const base = new Map<string, StoredVisit>();
      const next = new Map<string, Folding>();
      const start = (key: string, from: StoredVisit) => {
        base.set(key, from);
        const visit = { state: from.state, pending: { ...from.pending }, changed: false };
        next.set(key, visit);
        return visit;
      };
      const scratch: ScratchRows = new Map();
      // The records of visits neither remembered nor begun in the batch wait for one read of the
      // store, by their place in the batch: their rows are read again after it.
      const unknown: number[] = [];
      const unknownVisits = new Set<string>();
      for (let i = 0; i < records.length; i++) {
        const { table } = records[i];
        const row = rowOf(records[i], scratch);
        const key = keyOf(row);
        let visit = next.get(key);
        if (visit === undefined && !unknownVisits.has(key)) {
          const known = remembered.get(key);
          if (known) visit = start(key, known);
          else if (table === 'hits' && Number(row.is_entry) === 1) visit = start(key, NOTHING_STORED());
          else unknownVisits.add(key);
        }
        if (visit) fold(visit, table, row);
        else unknown.push(i);
      }
      if (unknown.length > 0) {
        const stored = await readStored(unknownVisits);
        for (let n = 0; n < unknown.length; n++) {
          const { table } = records[unknown[n]];
          const row = rowOf(records[unknown[n]], scratch);
          const key = keyOf(row);
          let visit = next.get(key);
          if (visit === undefined) {
            const found = stored.get(key);
            visit = start(key, found ? { ...NOTHING_STORED(), state: stateOfRow(found), version: Number(found.version), line: encodeCompactRow(VISIT_COLUMNS, found) } : NOTHING_STORED());
          }
          fold(visit, table, row);
        }
      }

      const lines: string[] = [];
      const kept = new Map<string, StoredVisit>();
      for (const [key, visit] of next) {
        const from = base.get(key)!;
        if (!visit.changed || visit.state === null) {
          kept.set(key, { ...from, pending: visit.pending });
          continue;
        }
        // A stored state (version > 0) always has its line.
        if (from.version > 0) lines.push(cancellationLine(from.line!));
        const version = from.version + 1;
        const line = encodeCompactRow(VISIT_COLUMNS, visitRow(visit.state, 1, version));
        lines.push(line);
        kept.set(key, { state: visit.state, version, line, pending: visit.pending, touchedAt: 0 });
      }
      return {
        lines,
        keep() {
          const now = clock();
          for (const [key, visit] of kept) {
            remembered.delete(key);
            visit.touchedAt = now;
            remembered.set(key, visit);
          }
          forgetIdle(now);
        },
        forget() {
          for (const key of next.keys()) remembered.delete(key);
        },
      };
    },
    size: () => remembered.size,
  };
}
