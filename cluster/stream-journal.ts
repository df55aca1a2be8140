// The leader's view of the ingest stream as a Journal, so the same writer that drains the disk
// journal on a single node drains JetStream in a cluster. Exactly-once comes from the cursor row
// in PostgreSQL (ingest_stream_cursor): a batch's sequence range is recorded, fenced by the
// leader's epoch, before it is inserted with a token derived from that range; the next leader
// finds the range and re-inserts the very same batch with the very same token, which ClickHouse
// stores once. Only after the insert is the cursor advanced and the stream purged below it.
import type { LeaderFence } from './fencing.ts';
import type { Journal, JournalBatch } from '../lib/ingest/journal.ts';
import type { JournalRecord } from '../lib/ingest/pipeline.ts';
import type { Log } from '../lib/log.ts';
import type { MetadataQueryable, MetadataStore } from '../lib/stores/metadata/index.ts';
import type { IngestStream } from './ingest-stream.ts';

export interface StreamJournalOptions {
  stream: IngestStream;
  metadata: () => MetadataStore;
  fence: LeaderFence;
  /** The leader's epoch this journal acts under. */
  epoch: number;
  log: Log;
  /** How often the stream's length is re-read, so the writer sees new messages. */
  refreshMs: number;
}

interface CursorRow {
  acked_seq: number;
  intent_first: number | null;
  intent_last: number | null;
}

export interface StreamJournal extends Journal<JournalRecord> {
  /** Sequence of the last message known to be in the analytics store. */
  ackedSeq(): number;
}

export function createStreamJournal(options: StreamJournalOptions): StreamJournal {
  const { stream, fence, epoch, log } = options;
  let acked = 0;
  let lastSeq = 0;
  let outstanding = false;
  let closed = false;

  const refresh = async () => {
    try {
      lastSeq = (await stream.depth()).lastSeq;
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'ingest stream: could not read its length');
    }
  };
  const timer = setInterval(() => void refresh(), options.refreshMs);
  timer.unref();
  void refresh();

  /** Read under the fence: taking a batch claims the epoch, so a deposed writer cannot ack after this. */
  function loadCursor(): Promise<CursorRow> {
    return fence.run(epoch, async (tx) => {
      await tx.query('INSERT INTO ingest_stream_cursor (stream, epoch) VALUES ($1, $2) ON CONFLICT (stream) DO NOTHING', [stream.key, epoch]);
      const { rows } = await tx.query<CursorRow>('SELECT acked_seq, intent_first, intent_last FROM ingest_stream_cursor WHERE stream = $1', [stream.key]);
      return rows[0];
    });
  }

  /** Within a fenced transaction: changes the cursor only if it is still where we last saw it. */
  async function moveCursor(tx: MetadataQueryable, set: string, params: unknown[], expected: string): Promise<void> {
    const { rowCount } = await tx.query(`UPDATE ingest_stream_cursor SET ${set}, epoch = $2, updated_at = now() WHERE stream = $1 AND ${expected}`, [stream.key, epoch, ...params]);
    if (rowCount !== 1) throw new Error(`ingest stream cursor ${stream.key} moved under epoch ${epoch}; another writer is active`);
  }

  async function take(maxRecords: number): Promise<JournalBatch<JournalRecord> | null> {
    const cursor = await loadCursor();
    acked = cursor.acked_seq;
    let first: number;
    let read: { records: JournalRecord[]; last: number } | null;
    if (cursor.intent_first !== null && cursor.intent_last !== null) {
      // A batch the previous writer recorded but did not finish: exactly the same one again.
      first = cursor.intent_first;
      read = await stream.read(first, { maxRecords, last: cursor.intent_last });
      log.info({ first, last: cursor.intent_last, epoch }, 'ingest stream: replaying the batch outstanding at the last leader change');
    } else {
      first = acked + 1;
      read = await stream.read(first, { maxRecords });
      if (!read || read.records.length === 0) return null;
      const last = read.last;
      await fence.run(epoch, (tx) =>
        moveCursor(tx, 'intent_first = $3, intent_last = $4', [first, last, acked], 'acked_seq = $5 AND intent_first IS NULL'),
      );
    }
    if (!read) throw new Error(`ingest stream ${stream.name}: messages ${first}… of an outstanding batch are missing`);
    const last = read.last;
    let acking: Promise<void> | null = null;
    const ack = () =>
      (acking ??= (async () => {
        await fence.run(epoch, async (tx) => {
          try {
            await moveCursor(tx, 'acked_seq = $3, intent_first = NULL, intent_last = NULL', [last, first], 'intent_first = $4 AND intent_last = $3');
          } catch (err) {
            // Already acknowledged by a writer that replayed this very batch (same token): done.
            const { rows } = await tx.query<{ acked_seq: number }>('SELECT acked_seq FROM ingest_stream_cursor WHERE stream = $1', [stream.key]);
            if (!(rows[0]?.acked_seq >= last)) throw err;
          }
        });
        acked = last;
        outstanding = false;
        // Best effort: what is not purged now is purged after the next batch.
        await stream.purgeBefore(last + 1).catch((err: Error) => log.debug({ err: err.message }, 'ingest stream: purge failed'));
      })().catch((err: unknown) => {
        acking = null;
        throw err;
      }));
    return { records: read.records, token: `${stream.key}:${first}-${last}`, ack };
  }

  return {
    append: (records) => stream.publish(records),
    async next(maxRecords) {
      if (closed) throw new Error('stream journal is closed');
      if (outstanding) throw new Error('stream journal: a batch is outstanding; ack() it before calling next() again');
      outstanding = true;
      try {
        const batch = await take(maxRecords);
        if (!batch) outstanding = false;
        return batch;
      } catch (err) {
        outstanding = false;
        throw err;
      }
    },
    pendingRecords: () => Math.max(0, lastSeq - acked),
    pendingBytes: () => 0,
    stats: () => ({ appends: 0, fsyncs: 0, segments: 0 }),
    ackedSeq: () => acked,
    async close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
