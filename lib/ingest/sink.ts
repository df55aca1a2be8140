// The durable path every accepted event takes before its 202, behind one interface the ingest
// service uses without knowing where it leads: the disk journal and its writer on a single node
// (below), a NATS JetStream stream drained by the leader in a cluster (cluster/ingest-sink.ts).
import { join } from 'node:path';
import type { ServiceBroker } from 'moleculer';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { type EncodedLine, encodeCompactRow, encodeRow, type LineBytes } from '../stores/analytics/transport.ts';
import { type Journal, openJournal, type RecordCodec } from './journal.ts';
import { LineRing } from './line-ring.ts';
import type { JournalRecord } from './pipeline.ts';
import { currentLayout, layoutColumns, rowOfLine, rowOfValues, type ScratchRows } from './row-layouts.ts';
import { type VisitStateKey, visitStateKey } from './visits.ts';
import { createIngestWriter } from './writer.ts';

/** Resolves once the records are durable; rejects with JournalFullError when the buffer is full. */
export type DurableAppend = Pick<Journal<JournalRecord>, 'append'>;

export interface IngestSinkDepth {
  /** Events (single node) or stream messages (cluster) accepted but not yet in the analytics store. */
  pending: number;
  bytes: number;
  /** What `pending` counts. */
  unit: 'records' | 'messages';
}

export interface IngestSink {
  /** Tracker ingest and crawler fetches: stored through this node's durable path. */
  readonly local: DurableAppend;
  /** Server ingest: stored by the leader (a follower forwards it there). */
  readonly leader: DurableAppend;
  depth(): Promise<IngestSinkDepth>;
  close(): Promise<void>;
}

export interface IngestSinkContext {
  broker: ServiceBroker;
  /** Called after a batch is in the analytics store, before it is acknowledged (see WriterOptions.onStored). */
  onStored(records: readonly JournalRecord[]): void | Promise<void>;
  /** A visitor's inactivity after which a new visit starts: how long the writer remembers an idle visit. */
  visitTimeoutMs: number;
  /** Single node: called after each fsync of the journal's data with its duration in seconds (a cluster's stream has none here). */
  onJournalSynced?(seconds: number): void;
}

export type OpenIngestSink = (context: IngestSinkContext) => Promise<IngestSink>;

/**
 * A journal record whose row travels as its encoded line (once, at append): the values of its
 * table's current layout (lib/ingest/row-layouts.ts) when it has one, else encodeRow's object. The
 * row object is parsed back from the line only when something reads it (the stored-batch listener
 * reads hits and events, never visits), so what waits for the writer is the line, not an object
 * graph for the garbage collector to trace and promote, and it is the row exactly as stored.
 * Framed by a codec with a line ring (encodedRecordCodec), the line then waits as bytes in the
 * ring (./line-ring.ts) when it has room, and the record marks how far the ring may be released
 * once it is stored.
 */
export class EncodedRecord implements JournalRecord, LineBytes {
  readonly table: JournalRecord['table'];
  readonly team: string;
  /** The version of the layout `line` is in (an array of values), or undefined for a JSON object. */
  readonly layout: number | undefined;
  /** The row's site_id and a visits row's state key, kept beside the line so that the goal
   * listener and the writer read them without parsing it. */
  readonly siteId: string | undefined;
  readonly visitState: VisitStateKey | undefined;
  readonly derivesVisit: true | undefined;
  /** The line's text, unless its bytes are in the ring. */
  #line: string | undefined;
  #ring: LineRing | undefined;
  /** The line's position in the ring, and its length in bytes. */
  #at = 0;
  #length = 0;
  /** What the ring had added once this record was framed: all of it may go once the record is stored. */
  #releases = 0;
  #row: Record<string, unknown> | undefined;

  constructor(
    table: JournalRecord['table'],
    team: string,
    line: string,
    row: Record<string, unknown> | undefined,
    keys: { siteId: string | undefined; visitState: VisitStateKey | undefined; derivesVisit?: true },
    layout?: number,
  ) {
    this.table = table;
    this.team = team;
    this.#line = line;
    this.layout = layout;
    this.siteId = keys.siteId;
    this.visitState = keys.visitState;
    this.derivesVisit = keys.derivesVisit;
    this.#row = row;
  }

  get line(): string {
    return this.#line ?? this.#ring!.text(this.#at, this.#length);
  }

  /** The line as the store's insert takes it: its text, or this record when its bytes are in the ring. */
  get encodedLine(): EncodedLine {
    return this.#line ?? this;
  }

  /** Where the line's bytes are in the ring, or -1 when its text is kept instead. */
  get ringPosition(): number {
    return this.#line === undefined ? this.#at : -1;
  }

  get lineBytes(): number {
    return this.#line === undefined ? this.#length : Buffer.byteLength(this.#line);
  }

  copyLine(target: Buffer, at: number): number {
    return this.#line === undefined ? this.#ring!.copy(this.#at, this.#length, target, at) : target.write(this.#line, at);
  }

  /** Moves the line's bytes (its UTF-8, as framed: `payload`'s from `start` to `end`) into the ring, if it has room; the text is kept otherwise. */
  keepLineIn(ring: LineRing, payload: Buffer, start: number, end: number): void {
    const at = ring.add(payload, start, end);
    if (at >= 0) {
      this.#at = at;
      this.#length = end - start;
      this.#line = undefined;
    }
    this.#ring = ring;
    this.#releases = ring.added;
  }

  /**
   * Once the record is stored: lets the ring overwrite its line and every line framed before it
   * (records are framed in journal order, and stored in that order). False when it was not framed with a ring.
   */
  releaseLine(): boolean {
    this.#ring?.release(this.#releases);
    return this.#ring !== undefined;
  }

  get row(): Record<string, unknown> {
    this.#row ??= this.readRow();
    return this.#row;
  }

  /**
   * The row, parsed from the line without being kept: for a reader that needs it once (the writer
   * deriving visits), so the parsed objects die young instead of living as long as the record.
   * With `scratch`, a line in a layout fills the one row object kept there for its columns, which
   * the next call overwrites: a row object per record is garbage the collector has to handle, and
   * V8 allocates straight into its old generation from any place whose objects it once saw survive
   * (the goals listener keeps the rows it reads), where they then cost full collections.
   */
  readRow(scratch?: ScratchRows): Record<string, unknown> {
    return this.#row ?? rowOfLine(this.table, this.layout, this.line, scratch);
  }
}

const keysOf = (record: JournalRecord) => ({
  siteId: record.row.site_id === undefined ? undefined : String(record.row.site_id),
  visitState: record.table === 'visits' ? visitStateKey(record.row) : undefined,
  derivesVisit: record.derivesVisit,
});

/**
 * A record as the single-node sink appends it to the journal: its row encoded once, here, in its
 * table's layout. A visit's cancellation by reference (as earlier versions journaled them) keeps
 * the object form: it is never inserted as such (the writer fills in the row it cancels).
 */
export function encodeRecord(record: JournalRecord): EncodedRecord {
  const keys = keysOf(record);
  const layout = keys.visitState?.reference ? undefined : currentLayout(record.table);
  return layout
    ? new EncodedRecord(record.table, record.team, encodeCompactRow(layout.columns, record.row), undefined, keys, layout.version)
    : new EncodedRecord(record.table, record.team, encodeRow(record.row), undefined, keys);
}

/** What precedes the line in a record's payload; the payload ends with `}` after it. */
const frameHead = (table: string, team: string, layout: number | undefined, derivesVisit: true | undefined) =>
  `{"table":${JSON.stringify(table)},"team":${JSON.stringify(team)},${derivesVisit ? '"derivesVisit":true,' : ''}${layout === undefined ? '"row":' : `"layout":${layout},"values":`}`;

/** A record's frame head, and its length in UTF-8 bytes (where the line starts in the payload). */
interface FrameHead {
  text: string;
  bytes: number;
}

/** Heads by team, then table and layout: a node writes few of them, and every accepted row needs one. */
const heads = new Map<string, Map<string, FrameHead>>();
/** The head last asked for, and what it is for: records come mostly of one team, table and layout in a row. */
let lastHead: { team: string; table: string; layout: number | undefined; derivesVisit: true | undefined; head: FrameHead } | undefined;

function cachedFrameHead(record: EncodedRecord): FrameHead {
  const last = lastHead;
  if (last !== undefined && last.team === record.team && last.table === record.table && last.layout === record.layout && last.derivesVisit === record.derivesVisit) return last.head;
  let byTable = heads.get(record.team);
  if (byTable === undefined) {
    if (heads.size >= 10_000) heads.clear();
    byTable = new Map();
    heads.set(record.team, byTable);
  }
  const key = `${record.table}/${record.layout}/${record.derivesVisit === true}`;
  let head = byTable.get(key);
  if (head === undefined) {
    const text = frameHead(record.table, record.team, record.layout, record.derivesVisit);
    head = { text, bytes: Buffer.byteLength(text) };
    byTable.set(key, head);
  }
  lastHead = { team: record.team, table: record.table, layout: record.layout, derivesVisit: record.derivesVisit, head };
  return head;
}

/** A payload as written: `row` (a JSON object, every journal before layouts) or `layout` and `values`. */
interface RecordPayload {
  table: JournalRecord['table'];
  team: string;
  row?: Record<string, unknown>;
  layout?: number;
  values?: unknown[];
  derivesVisit?: true;
}

/**
 * On disk a record is `{"table":…,"team":…,"layout":1,"values":[…]}` for a table with a layout,
 * else `{"table":…,"team":…,"row":{…}}` (as every record was before layouts, and is still read),
 * with `"derivesVisit":true,` after the team for a hit or event the writer derives its visit from,
 * put together around the row's encoded line so the line can be cut back out after a restart
 * instead of encoded again. With a ring, each framed record moves its line's bytes there.
 */
export function encodedRecordCodec(ring?: LineRing): RecordCodec<EncodedRecord> {
  return {
    ...ENCODED_RECORD_CODEC,
    framed: ring
      ? (record, payload) => {
          // The payload is the head, the line and a closing brace.
          record.keepLineIn(ring, payload, cachedFrameHead(record).bytes, payload.length - 1);
        }
      : undefined,
  };
}

/** The codec without a ring: every line is kept as text. */
export const ENCODED_RECORD_CODEC: RecordCodec<EncodedRecord> = {
  encode: (record) => [cachedFrameHead(record).text, record.line, '}'],
  decode(payload) {
    const record = JSON.parse(payload) as RecordPayload;
    const { table, team } = record;
    const derivesVisit = record.derivesVisit === true ? true : undefined;
    const layout = record.values === undefined ? undefined : (record.layout as number);
    const row = layout === undefined ? (record.row ?? {}) : rowOfValues(layoutColumns(table, layout), record.values!);
    const head = frameHead(table, team, layout, derivesVisit);
    const cut = payload.startsWith(head) && payload.endsWith('}') ? payload.slice(head.length, -1) : undefined;
    const line = cut ?? (layout === undefined ? encodeRow(row) : JSON.stringify(record.values));
    return new EncodedRecord(table, team, line, row, keysOf({ table, team, row, derivesVisit }), layout);
  },
};

/**
 * The line ring's size: the lines of about a second and a half of ingest at 20,000 events/s. The
 * writer takes a batch every second at most; when it falls further behind, new lines wait as text.
 */
export const LINE_RING_BYTES = 16 * 1024 * 1024;

/** With -ingest-sync write: how often the journal is fsync'd, the most a power loss can take. */
export const WRITE_MODE_SYNC_MS = 1000;

/** A batch is stored for good: the ring may overwrite its lines (the last record framed with the ring releases them all). */
export function releaseStoredLines(records: readonly JournalRecord[]): void {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (record instanceof EncodedRecord && record.releaseLine()) return;
  }
}

/** Single node: every event goes to the journal in <data-dir>/journal (fsync'd before the 202 by default); the writer drains it. */
export function journalSink(
  config: Config,
  log: Log,
  analytics: () => AnalyticsStore,
  whenStoresReady: (hook: () => void) => Promise<void>,
): OpenIngestSink {
  return async ({ onStored, visitTimeoutMs, onJournalSynced }) => {
    const lineRing = new LineRing(LINE_RING_BYTES);
    const journal = await openJournal<EncodedRecord>({
      dir: join(config.dataDir, 'journal'),
      log,
      maxPendingBytes: config.ingestBufferMb * 1024 * 1024,
      syncEveryMs: config.ingestSync === 'write' ? WRITE_MODE_SYNC_MS : 0,
      codec: encodedRecordCodec(lineRing),
      onSynced: onJournalSynced,
    });
    const writer = createIngestWriter({
      journal,
      analytics,
      log,
      batchSize: config.ingestBatchSize,
      flushMs: config.ingestFlushMs,
      onStored,
      onAcknowledged: releaseStoredLines,
      visitIdleMs: visitTimeoutMs,
      lineRing,
    });
    // Events are accepted into the journal at once; the writer starts with the stores (the ingest
    // service opens its sink before they are open), so nothing retries against a missing store.
    let closed = false;
    void whenStoresReady(() => {
      if (closed) return;
      if (journal.pendingRecords() > 0) log.info({ records: journal.pendingRecords() }, 'replaying ingest journal');
      writer.start();
    });
    const append: DurableAppend = {
      async append(records) {
        await journal.append(records.map(encodeRecord));
        writer.notify();
      },
    };
    return {
      local: append,
      leader: append,
      depth: async () => ({ pending: journal.pendingRecords(), bytes: journal.pendingBytes(), unit: 'records' }),
      async close() {
        closed = true;
        // Everything accepted is already on disk; what the writer cannot insert now is replayed at start.
        await writer.stop(Math.max(1000, config.shutdownTimeoutMs - 2000));
        await journal.close();
      },
    };
  };
}
