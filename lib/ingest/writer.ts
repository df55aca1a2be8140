// Drains the journal into the analytics store: a batch when enough events wait or the flush
// interval passes, one insert per tenant table with a token derived from the batch, so a batch
// retried after a failure or replayed after a crash is stored once. Acks only after every insert
// and after the stored-batch listener has finished with it.
import type { Log } from '../log.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { encodeRow } from '../stores/analytics/transport.ts';
import type { Journal, JournalBatch } from './journal.ts';
import type { JournalRecord } from './pipeline.ts';
import { type VisitStateKey, visitStateKey, withoutPassingStates } from './visits.ts';

/**
 * A record as the writer takes it: `line`, when present, is its row already encoded (encodeRow);
 * `visitState`, when present, a visits row's state key (else it is read from the row).
 */
export type WritableRecord = JournalRecord & { line?: string; visitState?: VisitStateKey };

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
}

const MAX_BACKOFF_MS = 5_000;

export function createIngestWriter(options: WriterOptions): IngestWriter {
  const { journal, log, batchSize, flushMs } = options;
  const ensured = new Set<string>();
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

  async function write(batch: JournalBatch<WritableRecord>): Promise<void> {
    const analytics = options.analytics();
    // By team, then table: one insert each (a batch's records are mostly of one or two teams).
    const teams = new Map<string, Map<string, WritableRecord[]>>();
    for (const record of batch.records) {
      let tables = teams.get(record.team);
      if (tables === undefined) {
        tables = new Map();
        teams.set(record.team, tables);
      }
      const group = tables.get(record.table);
      if (group) group.push(record);
      else tables.set(record.table, [record]);
    }
    for (const group of [...teams.values()].flatMap((tables) => [...tables.values()])) {
      const { team, table } = group[0];
      const key = `${team}.${table}`;
      // A visit's states written and cancelled again within the batch (a burst of its hits, a
      // replayed journal) would only cancel out in the store: they are not sent. The batch's
      // records decide what is dropped, so a retried or replayed batch inserts the same rows.
      const records = table === 'visits' ? withoutPassingStates(group, (r) => r.visitState ?? visitStateKey(r.row)) : group;
      const database = analytics.tenantDatabase(team);
      if (!ensured.has(team)) {
        await analytics.ensureTenant(team);
        ensured.add(team);
      }
      await analytics.insertLines(
        table,
        records.map((r) => r.line ?? encodeRow(r.row)),
        { database, dedupToken: `${batch.token}:${key}` },
      );
    }
  }

  async function run(): Promise<void> {
    let backoff = 100;
    let batch: JournalBatch<WritableRecord> | null = null;
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
        await write(current);
        await options.onStored?.(current.records);
        await current.ack();
        stats.inserted += current.records.length;
        stats.batches++;
        batch = null;
        backoff = 100;
      } catch (err) {
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
    },
    stats: () => ({ ...stats }),
  };
}
