// The durable path every accepted event takes before its 202, behind one interface the ingest
// service uses without knowing where it leads: the disk journal and its writer on a single node
// (below), a NATS JetStream stream drained by the leader in a cluster (cluster/ingest-sink.ts).
import { join } from 'node:path';
import type { ServiceBroker } from 'moleculer';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { type Journal, openJournal } from './journal.ts';
import type { JournalRecord } from './pipeline.ts';
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
}

export type OpenIngestSink = (context: IngestSinkContext) => Promise<IngestSink>;

/** Single node: every event goes to the fsync'd journal in <data-dir>/journal; the writer drains it. */
export function journalSink(config: Config, log: Log, analytics: () => AnalyticsStore): OpenIngestSink {
  return async ({ onStored }) => {
    const journal = await openJournal<JournalRecord>({ dir: join(config.dataDir, 'journal'), log, maxPendingBytes: config.ingestBufferMb * 1024 * 1024 });
    const writer = createIngestWriter({ journal, analytics, log, batchSize: config.ingestBatchSize, flushMs: config.ingestFlushMs, onStored });
    if (journal.pendingRecords() > 0) log.info({ records: journal.pendingRecords() }, 'replaying ingest journal');
    writer.start();
    const append: DurableAppend = {
      async append(records) {
        await journal.append(records);
        writer.notify();
      },
    };
    return {
      local: append,
      leader: append,
      depth: async () => ({ pending: journal.pendingRecords(), bytes: journal.pendingBytes(), unit: 'records' }),
      async close() {
        // Everything accepted is already on disk; what the writer cannot insert now is replayed at start.
        await writer.stop(Math.max(1000, config.shutdownTimeoutMs - 2000));
        await journal.close();
      },
    };
  };
}
