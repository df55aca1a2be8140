// Group commit: what callers hand in while a round is in flight goes out together in the next
// round, so a busy node makes few large sends instead of many small ones. Each caller's promise
// settles with its round. Used by follower forwarding and by the JetStream ingest stream.
import { randomUUID } from 'node:crypto';
import type { JournalRecord } from '../lib/ingest/pipeline.ts';

interface Waiter {
  records: readonly JournalRecord[];
  resolve(): void;
  reject(err: unknown): void;
}

export interface GroupCommit {
  /** Resolves once the round that carries these records has been sent. */
  append(records: readonly JournalRecord[]): Promise<void>;
  /** Resolves when no round is in flight (for a clean close). */
  idle(): Promise<void>;
}

/** `send` receives every record of a round, in arrival order, and a fresh id for the round. */
export function groupCommit(send: (records: JournalRecord[], roundId: string) => Promise<void>): GroupCommit {
  let queue: Waiter[] = [];
  let flushing: Promise<void> | null = null;
  async function flushRounds(): Promise<void> {
    while (queue.length > 0) {
      const round = queue;
      queue = [];
      try {
        await send(
          round.flatMap((w) => w.records),
          randomUUID(),
        );
        for (const waiter of round) waiter.resolve();
      } catch (err) {
        for (const waiter of round) waiter.reject(err);
      }
    }
    flushing = null;
  }
  return {
    append(records) {
      if (records.length === 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        queue.push({ records, resolve, reject });
        flushing ??= Promise.resolve().then(flushRounds);
      });
    },
    idle: async () => {
      await flushing;
    },
  };
}
