// The cluster's durable ingest buffer: one NATS JetStream stream per namespace, file-backed and
// bounded. Every node appends here before answering 202 (tracker ingest directly; server ingest
// through the leader, or directly while there is none); the leader drains it into the analytics
// store (cluster/stream-journal.ts). Messages carry JSON arrays of journal records.
import { groupCommit } from './group-commit.ts';
import { connect, type DiscardPolicy, type JetStreamClient, type JetStreamManager, type NatsConnection, nanos, type RetentionPolicy, type StorageType } from 'nats';
import { unavailable } from '../lib/errors.ts';
import { JournalFullError } from '../lib/ingest/journal.ts';
import type { JournalRecord } from '../lib/ingest/pipeline.ts';
import type { Log } from '../lib/log.ts';

export interface IngestStreamOptions {
  /** nats:// URL of a server with JetStream enabled. */
  url: string;
  namespace: string;
  /** Stream capacity; a publish beyond it is refused (503), never an older message dropped. */
  maxBytes: number;
  /** Copies kept by a NATS cluster; only applied when the stream is created. Default 1. */
  replicas?: number;
  log: Log;
}

export interface StreamDepth {
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
}

export interface IngestStream {
  readonly name: string;
  /** Stream name plus its creation time: a cursor and the insert tokens never outlive the stream they point into. */
  readonly key: string;
  /**
   * Durable once resolved. With a msgId, publishing the same records again within the duplicate
   * window (two minutes) stores nothing new: a retried forward is kept once.
   */
  publish(records: readonly JournalRecord[], msgId?: string): Promise<void>;
  depth(): Promise<StreamDepth>;
  /**
   * Records of messages first…, in order: every message up to `last` when given (a batch replayed
   * exactly), else messages until at least `maxRecords` records or the end of the stream.
   */
  read(first: number, options: { maxRecords: number; last?: number }): Promise<{ records: JournalRecord[]; last: number } | null>;
  /** Drops every message below seq (already in the analytics store). */
  purgeBefore(seq: number): Promise<void>;
  close(): Promise<void>;
}

const DUPLICATE_WINDOW_MS = 120_000;
const READ_CHUNK = 64;
const PUBLISH_TIMEOUT_MS = 5_000;

/** JetStream names allow neither dots nor wildcards; subjects use dots as separators. */
const safe = (namespace: string) => namespace.replace(/[^A-Za-z0-9_-]/g, '_');

export async function openIngestStream(options: IngestStreamOptions): Promise<IngestStream> {
  const { log } = options;
  const name = `${safe(options.namespace)}_ingest`;
  const subject = `plumb.${safe(options.namespace)}.ingest`;
  const nc: NatsConnection = await connect({ servers: options.url, name: `plumb-ingest-${name}`, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  let jsm: JetStreamManager;
  let created: string;
  try {
    jsm = await nc.jetstreamManager();
    created = await ensureStream(jsm, { name, subject, maxBytes: options.maxBytes, replicas: options.replicas ?? 1 }, log);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw new Error(`JetStream ingest stream ${name} at ${new URL(options.url).host} is unavailable: ${(err as Error).message}`, { cause: err });
  }
  const js: JetStreamClient = nc.jetstream();
  // Half the server's payload limit: a message is records plus framing, and the limit is per message.
  const maxMessageBytes = Math.max(64 * 1024, Math.floor((nc.info?.max_payload ?? 1024 * 1024) / 2));

  /** Deterministic split of records into messages under the payload limit: same records, same messages. */
  function encode(records: readonly JournalRecord[]): Uint8Array[] {
    const messages: Uint8Array[] = [];
    let parts: string[] = [];
    let size = 2;
    for (const record of records) {
      const json = JSON.stringify(record);
      if (parts.length > 0 && size + json.length + 1 > maxMessageBytes) {
        messages.push(Buffer.from(`[${parts.join(',')}]`));
        parts = [];
        size = 2;
      }
      parts.push(json);
      size += json.length + 1;
    }
    if (parts.length > 0) messages.push(Buffer.from(`[${parts.join(',')}]`));
    return messages;
  }

  async function publishOne(data: Uint8Array, msgID: string): Promise<void> {
    try {
      await js.publish(subject, data, { msgID, timeout: PUBLISH_TIMEOUT_MS });
    } catch (err) {
      // JetStream reports a full stream as an API error ("maximum bytes exceeded"), message "503".
      const failure = err as Error & { api_error?: { description?: string } };
      const message = `${failure.message ?? ''} ${failure.api_error?.description ?? ''}`.trim();
      if (/maximum (bytes|messages)|insufficient resources/i.test(message)) throw new JournalFullError(options.maxBytes, options.maxBytes);
      log.warn({ err: message, stream: name }, 'ingest stream: publish failed');
      throw unavailable('The ingest buffer (JetStream) is unreachable; retry shortly', 2);
    }
  }

  // Appends without an id (tracker ingest) are group-committed: few large messages from a busy node.
  const rounds = groupCommit(async (records, roundId) => {
    await Promise.all(encode(records).map((data, i) => publishOne(data, `${roundId}:${i}`)));
  });

  return {
    name,
    key: `${name}@${created}`,

    publish(records, msgId) {
      if (records.length === 0) return Promise.resolve();
      if (msgId !== undefined) return Promise.all(encode(records).map((data, i) => publishOne(data, `${msgId}:${i}`))).then(() => undefined);
      return rounds.append(records);
    },

    async depth() {
      const { state } = await jsm.streams.info(name);
      return { messages: state.messages, bytes: state.bytes, firstSeq: state.first_seq, lastSeq: state.last_seq };
    },

    async read(first, { maxRecords, last }) {
      const end = last ?? (await jsm.streams.info(name)).state.last_seq;
      if (end < first) return null;
      const records: JournalRecord[] = [];
      let seq = first;
      while (seq <= end && (last !== undefined || records.length < maxRecords)) {
        const upTo = Math.min(end, seq + READ_CHUNK - 1);
        const seqs = Array.from({ length: upTo - seq + 1 }, (_, i) => seq + i);
        const messages = await Promise.all(seqs.map((s) => jsm.streams.getMessage(name, { seq: s })));
        for (const message of messages) {
          records.push(...(JSON.parse(Buffer.from(message.data).toString('utf8')) as JournalRecord[]));
          seq = message.seq + 1;
          if (last === undefined && records.length >= maxRecords) break;
        }
      }
      return { records, last: seq - 1 };
    },

    async purgeBefore(seq) {
      await jsm.streams.purge(name, { seq });
    },

    async close() {
      await rounds.idle();
      await nc.drain().catch(() => nc.close());
    },
  };
}

/** Creates the stream if missing (nodes may race: the loser reads what the winner made); returns its creation time. */
async function ensureStream(jsm: JetStreamManager, spec: { name: string; subject: string; maxBytes: number; replicas: number }, log: Log): Promise<string> {
  const config = {
    name: spec.name,
    subjects: [spec.subject],
    retention: 'limits' as RetentionPolicy,
    storage: 'file' as StorageType,
    discard: 'new' as DiscardPolicy,
    max_bytes: spec.maxBytes,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: spec.replicas,
  };
  const existing = await jsm.streams.info(spec.name).catch(() => null);
  if (existing) {
    if (existing.config.max_bytes !== spec.maxBytes) {
      await jsm.streams.update(spec.name, { max_bytes: spec.maxBytes });
      log.info({ stream: spec.name, maxBytes: spec.maxBytes }, 'ingest stream: capacity changed');
    }
    return existing.created;
  }
  try {
    const info = await jsm.streams.add(config);
    log.info({ stream: spec.name, subject: spec.subject, maxBytes: spec.maxBytes }, 'ingest stream created');
    return info.created;
  } catch (err) {
    const info = await jsm.streams.info(spec.name).catch(() => null);
    if (!info) throw err;
    return info.created;
  }
}
