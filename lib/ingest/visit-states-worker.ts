// The writer's visit states, derived on a worker thread of their own (./visit-states-thread.ts):
// reading back each hit's line and folding it into its visit is most of what the writer does per
// pageview, and on the main thread that work is taken from the requests. The worker remembers the
// visits; this side sends it each batch's hits and events, and reads the store for it when it
// asks (the store's connection lives on this thread).
//
// A batch crosses cheaply: a line whose bytes wait in the journal's line ring is sent as its place
// there (the ring's memory is shared with the worker), a line kept as text as its text, and a row
// that never had a line (a cluster's stream records) as the object. A worker that fails takes its
// memory with it; the next batch starts another, which reads the visits it meets from the store,
// as a writer does after a restart.
import { Worker } from 'node:worker_threads';
import type { Log } from '../log.ts';
import { type Release, releasedFields } from '../memory-release.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { LineRing } from './line-ring.ts';
import type { AnalyticsTable } from './pipeline.ts';
import { type DerivedVisits, readStoredStates, type VisitStates, type VisitStatesOptions } from './visit-states.ts';
import type { WritableRecord } from './writer.ts';

/** The tables visits are derived from, by their number in a batch's `tables`. */
export const SOURCE_TABLES: readonly AnalyticsTable[] = ['hits', 'events'];

/** In a batch's `positions`: the line is in `texts`, or the row in `rows`, instead of in the ring. */
export const LINE_AS_TEXT = -1;
export const ROW_AS_OBJECT = -2;

/** A batch's hits and events as they cross to the worker, record by record, in journal order. */
export interface SourceBatch {
  tables: Uint8Array;
  /** The layout version of the record's line (lib/ingest/row-layouts.ts); 0 for a JSON object's line. */
  layouts: Uint16Array;
  /** Where the line is in the ring, or LINE_AS_TEXT, or ROW_AS_OBJECT. */
  positions: Float64Array;
  /** The line's length in the ring, in bytes. */
  lengths: Int32Array;
  /** The lines sent as text, in record order. */
  texts: string[];
  /** The rows sent as objects, in record order. */
  rows: Record<string, unknown>[];
}

export type ToThread =
  | { type: 'derive'; id: number; batch: SourceBatch }
  | { type: 'stored'; id: number; rows?: Map<string, Record<string, unknown>>; error?: string }
  | { type: 'keep' | 'forget' | 'size'; id: number };

export type FromThread =
  | { type: 'read'; id: number; visits: string[] }
  | { type: 'derived'; id: number; lines: string[] }
  | { type: 'size'; id: number; size: number }
  | { type: 'failed'; id: number; error: string }
  /** The worker released its heap when quiet (lib/memory-release.ts); for the log. */
  | ({ type: 'released' } & Release);

/** What the worker is started with. */
export interface ThreadData extends Omit<VisitStatesOptions, 'clock'> {
  ring: SharedArrayBuffer | undefined;
}

/**
 * The worker's heap: the visits it remembers (100,000 at most, ~1 KiB each) and a batch's parsed
 * rows, which die young. V8's heap flags (`-heap-mb`, set by `plumb serve` for the process) apply
 * to every isolate and override these; they hold when no flag is set.
 */
const THREAD_HEAP = { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: 24 };

/** A batch's records, for the worker: each as its place in `ring` when its line is there, else its line's text, else its row. */
export function sourceBatch(records: readonly WritableRecord[], ring: LineRing | undefined): { batch: SourceBatch; transfer: ArrayBuffer[] } {
  const count = records.length;
  const batch: SourceBatch = {
    tables: new Uint8Array(count),
    layouts: new Uint16Array(count),
    positions: new Float64Array(count),
    lengths: new Int32Array(count),
    texts: [],
    rows: [],
  };
  for (let i = 0; i < count; i++) {
    const record = records[i];
    const table = SOURCE_TABLES.indexOf(record.table);
    if (table < 0) throw new Error(`visits are derived from hits and events, not from ${record.table}`);
    batch.tables[i] = table;
    batch.layouts[i] = record.layout ?? 0;
    const position = ring === undefined ? undefined : record.ringPosition;
    if (position !== undefined && position >= 0) {
      batch.positions[i] = position;
      batch.lengths[i] = record.lineBytes!;
    } else if (record.line !== undefined) {
      batch.positions[i] = LINE_AS_TEXT;
      batch.texts.push(record.line);
    } else {
      batch.positions[i] = ROW_AS_OBJECT;
      batch.rows.push(record.row);
    }
  }
  return { batch, transfer: [batch.tables.buffer, batch.layouts.buffer, batch.positions.buffer, batch.lengths.buffer] as ArrayBuffer[] };
}

interface Call {
  resolve(message: FromThread): void;
  reject(err: Error): void;
  /** Where a derive's visits are read from when the worker asks. */
  read?: { analytics: AnalyticsStore; database: string };
}

/** The worker's module. */
const THREAD_MODULE = new URL('./visit-states-thread.ts', import.meta.url);

export interface VisitStatesWorkerOptions extends Omit<VisitStatesOptions, 'clock'> {
  /** The journal's line ring, when the records' lines wait there. */
  ring?: LineRing;
  log: Log;
  /** The worker's module, when not ./visit-states-thread.ts (a test's, which fails on purpose). */
  threadModule?: URL;
}

/** Visit states derived on a worker thread, started at the first batch. */
export function visitStatesInWorker(options: VisitStatesWorkerOptions): VisitStates {
  const { ring, log } = options;
  const data: ThreadData = { idleMs: options.idleMs, maxVisits: options.maxVisits, ring: ring?.shared };
  let worker: Worker | undefined;
  let nextId = 1;
  const calls = new Map<number, Call>();

  function started(): Worker {
    if (worker) return worker;
    const thread = new Worker(options.threadModule ?? THREAD_MODULE, { workerData: data, resourceLimits: THREAD_HEAP });
    // The writer ends it when it stops; until then it must not keep a process alive by itself.
    thread.unref();
    thread.on('message', (message: FromThread) => answer(thread, message));
    thread.on('error', (err) => lost(thread, err as Error));
    thread.on('exit', (code) => lost(thread, new Error(`the visit states' worker thread exited (code ${code})`)));
    worker = thread;
    return thread;
  }

  /** The worker is gone: what it was asked fails (the writer retries the batch), and the next batch starts another. */
  function lost(thread: Worker, err: Error): void {
    if (worker !== thread) return;
    worker = undefined;
    log.warn({ err: err.message, waiting: calls.size }, 'ingest writer: the visit states worker stopped; a new one reads the visits it meets from the store');
    for (const call of calls.values()) call.reject(err);
    calls.clear();
  }

  function answer(thread: Worker, message: FromThread): void {
    if (message.type === 'released') {
      log.debug(releasedFields(message), 'ingest writer: the visit states worker released the JavaScript heap it no longer used');
      return;
    }
    const call = calls.get(message.id);
    if (call === undefined) return;
    if (message.type === 'read') {
      const { analytics, database } = call.read!;
      readStoredStates(analytics, database, new Set(message.visits)).then(
        (rows) => thread.postMessage({ type: 'stored', id: message.id, rows } satisfies ToThread),
        (err: Error) => thread.postMessage({ type: 'stored', id: message.id, error: err.message } satisfies ToThread),
      );
      return;
    }
    calls.delete(message.id);
    if (message.type === 'failed') call.reject(new Error(message.error));
    else call.resolve(message);
  }

  function ask(thread: Worker, message: ToThread, transfer: ArrayBuffer[] = [], read?: Call['read']): Promise<FromThread> {
    return new Promise((resolve, reject) => {
      calls.set(message.id, { resolve, reject, read });
      thread.postMessage(message, transfer);
    });
  }

  /** A derived batch is kept or forgotten by the worker that derived it; one started since knows nothing of it. */
  const settle = (thread: Worker, type: 'keep' | 'forget', id: number) => {
    if (worker === thread) thread.postMessage({ type, id } satisfies ToThread);
  };

  return {
    async derive(analytics, database, records): Promise<DerivedVisits> {
      const thread = started();
      const id = nextId++;
      const { batch, transfer } = sourceBatch(records, ring);
      const derived = (await ask(thread, { type: 'derive', id, batch }, transfer, { analytics, database })) as Extract<FromThread, { type: 'derived' }>;
      return { lines: derived.lines, keep: () => settle(thread, 'keep', id), forget: () => settle(thread, 'forget', id) };
    },
    async size() {
      if (!worker) return 0;
      const answered = (await ask(worker, { type: 'size', id: nextId++ })) as Extract<FromThread, { type: 'size' }>;
      return answered.size;
    },
    async close() {
      const thread = worker;
      worker = undefined;
      for (const call of calls.values()) call.reject(new Error('the visit states worker was closed'));
      calls.clear();
      await thread?.terminate();
    },
  };
}
