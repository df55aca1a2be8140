// Server ingest on a follower: validated and authenticated locally, then handed to the leader in
// batches (`cluster.receive` on the leader's node). When the call fails because the
// leader is gone or unreachable (service not found, timeout, node disconnected) the follower
// re-reads the leader and tries the new one; with no reachable leader it appends the batch to the
// JetStream buffer itself, so the 202 still means "durable". Every attempt carries the same batch
// id, which JetStream deduplicates on, so a batch the old leader did store is not stored twice.
import { groupCommit } from './group-commit.ts';
import type { ServiceBroker } from 'moleculer';
import { unavailable } from '../lib/errors.ts';
import { JournalFullError } from '../lib/ingest/journal.ts';
import type { DurableAppend } from '../lib/ingest/sink.ts';
import type { JournalRecord } from '../lib/ingest/pipeline.ts';
import type { Log } from '../lib/log.ts';
import type { LeaderElector } from './election/elector.ts';
import type { IngestStream } from './ingest-stream.ts';

export const RECEIVE_ACTION = 'cluster.receive';

export interface ForwardedBatch {
  /** `<round uuid>:<index>`: the JetStream message id prefix, the same on every retry of the batch. */
  batchId: string;
  records: JournalRecord[];
}

/**
 * Counted in events (pageviews, custom events, vitals, AI fetches), so the figures match what
 * clients sent: visit rows that nodes of an earlier version journaled with them are not counted.
 */
export interface ForwardingStats {
  /** Events this node handed to another node that leads. */
  forwarded: number;
  /** Events this node, as leader, received from followers. */
  received: number;
  /** Events this node put into the JetStream buffer because no leader could take them. */
  buffered: number;
  /** Events this node stored as leader for its own server-ingest requests. */
  stored: number;
}

const eventsIn = (records: readonly JournalRecord[]) => records.reduce((n, record) => (record.table === 'visits' ? n : n + 1), 0);

export interface Forwarder extends DurableAppend {
  /** The leader's side of a forward: store the batch under its id. */
  receive(batch: ForwardedBatch): Promise<void>;
  stats(): ForwardingStats;
}

export interface ForwarderOptions {
  broker: ServiceBroker;
  elector: LeaderElector;
  stream: IngestStream;
  nodeId: string;
  timeoutMs: number;
  log: Log;
}

/** One try per leader seen: the first, and each new one learned after a failure. */
const MAX_ATTEMPTS = 3;
/** Well under NATS's default 1 MiB message limit, with room for Moleculer's envelope. */
const BATCH_BYTES = 256 * 1024;

export function createForwarder(options: ForwarderOptions): Forwarder {
  const { broker, elector, stream, nodeId, log } = options;
  const stats: ForwardingStats = { forwarded: 0, received: 0, buffered: 0, stored: 0 };

  const reachable = (node: string) => broker.registry.nodes.get(node)?.available === true;

  /** One batch to the leader, or into the buffer; durable once it resolves. */
  async function deliver(batch: ForwardedBatch): Promise<void> {
    const count = eventsIn(batch.records);
    const tried = new Set<string>();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const leader = elector.state().leaderNodeId;
      if (leader === nodeId) {
        await stream.publish(batch.records, batch.batchId);
        stats.stored += count;
        return;
      }
      if (leader === null || tried.has(leader) || !reachable(leader)) break;
      tried.add(leader);
      try {
        await broker.call(RECEIVE_ACTION, batch, { nodeID: leader, timeout: options.timeoutMs, retries: 0 });
        stats.forwarded += count;
        return;
      } catch (err) {
        const failure = err as Error & { code?: number; retryable?: boolean };
        // Moleculer's retryable errors (service not found, timeout, node gone) and the leader's
        // 5xx (stopping, not ready, full) are worth another leader or the buffer: the batch id
        // makes a second copy of something the leader did store a JetStream duplicate. Another
        // 4xx is a bug in what we sent, which buffering would not fix.
        if (!failure.retryable && typeof failure.code === 'number' && failure.code >= 400 && failure.code < 500) {
          throw new Error(`forwarding to leader ${leader} was refused: ${failure.message}`, { cause: err });
        }
        log.warn({ err: failure.message, leader, records: count }, 'forwarding: leader did not take the batch; re-reading the leader');
      }
    }
    await stream.publish(batch.records, batch.batchId);
    stats.buffered += count;
  }

  // Requests arriving while a round is in flight are sent together in the next one, so a busy
  // follower makes few large calls. A round is cut into batches under the transporter's message
  // size, each with its own id.
  const rounds = groupCommit(async (records, roundId) => {
    await Promise.all(chunk(records).map((part, i) => deliver({ batchId: `${roundId}:${i}`, records: part })));
  });

  return {
    append: rounds.append,

    async receive(batch) {
      try {
        await stream.publish(batch.records, batch.batchId);
      } catch (err) {
        // Crosses the transporter as a PlumbError, so the follower answers the same 503.
        if (err instanceof JournalFullError) throw unavailable('Ingest buffer is full; retry shortly', err.retryAfterSeconds);
        throw err;
      }
      stats.received += eventsIn(batch.records);
    },

    stats: () => ({ ...stats }),
  };
}

/** Splits records into batches of at most BATCH_BYTES of JSON (a record is never split). */
function chunk(records: JournalRecord[]): JournalRecord[][] {
  const batches: JournalRecord[][] = [];
  let current: JournalRecord[] = [];
  let size = 0;
  for (const record of records) {
    const bytes = JSON.stringify(record).length;
    if (current.length > 0 && size + bytes > BATCH_BYTES) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(record);
    size += bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
