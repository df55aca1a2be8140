// `plumb forward-ai-fetches`: follows web-server logs, keeps the lines of AI crawlers and
// assistants, and sends them to Plumb in batches. A log's position is saved only after the server
// accepted the batch that ends there, and each batch carries an Idempotency-Key made from where its
// lines lie and what they hold: a restart re-reads from the last accepted line, and a resend of a
// batch the server had already stored (a crash between its 202 and the state write) stores nothing.
import { createHash, type Hash } from 'node:crypto';
import { resolve } from 'node:path';
import { matchAiAgent } from '../ingest/enrich/ai-agents.ts';
import { type AiFetch, MAX_BATCH_ITEMS } from '../ingest/schemas.ts';
import { createLineParser, type LineParser, type LogFormat } from './formats/index.ts';
import { findRotated, headerLines, inodeOf, type OpenLogFile, openLogFile, type RawLine } from './log-file.ts';
import { createDelivery, type Delivery } from './delivery.ts';
import type { SenderOptions } from './sender.ts';
import { openStateStore, type StateStore } from './state.ts';

export interface ForwarderOptions extends Omit<SenderOptions, 'onRetry'> {
  format: LogFormat;
  logs: string[];
  /** One state file for every log; by default each log's own `<log>.plumb-state`. */
  statePath?: string;
  batchSize?: number;
  flushMs?: number;
  pollMs?: number;
  /** Read every log to its end, send, and return (cron); otherwise follow them until `signal` aborts. */
  once?: boolean;
  /**
   * How often a failed send is retried before the forwarder gives up with a ServerUnavailable:
   * 5 by default with `once` (about half a minute of backoff), for ever otherwise.
   */
  maxRetries?: number;
  /** Progress and problems, one line each. */
  report(line: string): void;
}

export interface ForwarderStats {
  /** Lines read, of every kind. */
  lines: number;
  /** Lines of other agents than AI ones (visitors, search engines), not sent. */
  otherAgents: number;
  /** Lines no format could read (and headers none expected), not sent. */
  malformed: number;
  /** Fetches the server stored, and those it refused (as invalid, or whole: too large, or a bad batch). */
  accepted: number;
  rejected: number;
  /** Batches the server had already stored under their key (a resend). */
  replayedBatches: number;
}

export const defaultStatePath = (log: string) => `${resolve(log)}.plumb-state`;

/** A batch's Idempotency-Key: the same lines of the same file always give the same key, other lines never. */
export function batchKey(parts: { siteId: string; log: string; inode: string; start: number; end: number; digest: string }): string {
  return createHash('sha256').update([parts.siteId, resolve(parts.log), parts.inode, parts.start, parts.end, parts.digest].join('\n')).digest('hex');
}

interface Pending {
  items: AiFetch[];
  /** Where each item's line starts, to name a rejected one. */
  lineStarts: number[];
  hash: Hash;
  end: number;
  since: number;
}

/** One log path: the file open at it (or the rotated one being finished), what is read but not yet accepted, and the saved position. */
function createLogForwarder(log: string, ctx: { options: ForwarderOptions; state: StateStore; deliver: Delivery; stats: ForwarderStats }) {
  const { options, state, deliver, stats } = ctx;
  const batchSize = options.batchSize ?? 500;
  const flushMs = options.flushMs ?? 2000;
  let file: OpenLogFile | null = null;
  let parser: LineParser = createLineParser(options.format);
  /** Just past the last line whose batch was accepted (or which needed no batch). */
  let committed = 0;
  let pending: Pending = fresh(0);
  let rotationSeenAt: number | undefined;
  /** Where the batch sent before a restart ended: the first batch read ends there too, so it is sent with the same key. */
  let resendTo: number | undefined;

  function fresh(end: number): Pending {
    return { items: [], lineStarts: [], hash: createHash('sha256'), end, since: Date.now() };
  }

  async function start(path: string, offset: number): Promise<boolean> {
    file = await openLogFile(path, offset);
    if (!file) return false;
    parser = createLineParser(options.format);
    if (offset > 0 && parser.header) for (const line of await headerLines(path, offset)) parser.header(line);
    committed = offset;
    pending = fresh(offset);
    resendTo = undefined;
    return true;
  }

  /** Opens where the saved position says: the same file, the file it was rotated to, or the new one from its start. */
  async function open(): Promise<boolean> {
    const saved = state.position(log);
    const current = await inodeOf(log);
    if (saved && current?.inode === saved.inode) {
      if (current.size < saved.offset) return start(log, 0);
      if (!(await start(log, saved.offset))) return false;
      resendTo = saved.sendingTo;
      return true;
    }
    if (saved) {
      const rotated = await findRotated(log, saved.inode);
      if (rotated && (await start(rotated, saved.offset))) {
        resendTo = saved.sendingTo;
        return true;
      }
      if (current) options.report(`${log}: rotated while the forwarder was stopped, and the old file is gone; reading the new one from its start`);
    }
    if (!current) return false;
    if (!(await start(log, 0))) return false;
    if (saved) await save();
    return true;
  }

  const save = (sendingTo?: number) => state.save(log, { inode: (file as OpenLogFile).inode, offset: committed, ...(sendingTo === undefined ? {} : { sendingTo }) });

  /** Sends what is pending (if any fetch is) and saves the position past it. */
  async function flush(): Promise<void> {
    const current = file as OpenLogFile;
    const batch = pending;
    if (batch.end === committed) return;
    if (batch.items.length > 0) {
      const key = batchKey({ siteId: options.siteId, log, inode: current.inode, start: committed, end: batch.end, digest: batch.hash.digest('hex') });
      await save(batch.end);
      const delivered = await deliver(batch.items, key);
      stats.accepted += delivered.accepted;
      if (delivered.replayed) stats.replayedBatches++;
      let refused = 0;
      let named = 0;
      for (const refusal of delivered.refusals) {
        refused += refusal.indexes.length;
        const first = refusal.indexes[0];
        const last = refusal.indexes[refusal.indexes.length - 1];
        if (refusal.whole) {
          const end = batch.lineStarts[last + 1] ?? batch.end;
          options.report(`${log}: the server refused ${refusal.indexes.length} fetches (bytes ${batch.lineStarts[first]}–${end}) whole (${refusal.message}); skipped`);
        } else if (named++ < 5) {
          options.report(`${log}: line at byte ${batch.lineStarts[first]} refused: ${refusal.message}`);
        }
      }
      stats.rejected += refused;
      const replayed = delivered.replayed ? ' (already stored: a resend)' : '';
      const requests = delivered.extraRequests > 0 ? ` in ${delivered.extraRequests + 1} requests` : '';
      options.report(`${log}: sent ${batch.items.length} fetches${requests}, ${delivered.accepted} stored, ${refused} refused${replayed}`);
    }
    committed = batch.end;
    pending = fresh(committed);
    await save();
  }

  function take(line: RawLine): void {
    stats.lines++;
    pending.end = line.end;
    if (line.oversize) {
      pending.hash.update(`oversize ${line.start}-${line.end}\n`);
      stats.malformed++;
      return;
    }
    pending.hash.update(line.bytes);
    const parsed = parser.parse(line.bytes.toString('utf8').replace(/\r?\n$/, ''));
    if (parsed.kind === 'malformed') stats.malformed++;
    if (parsed.kind !== 'fetch') return;
    if (!matchAiAgent(parsed.fetch.user_agent)) {
      stats.otherAgents++;
      return;
    }
    if (pending.items.length === 0) pending.since = Date.now();
    pending.items.push(parsed.fetch);
    pending.lineStarts.push(line.start);
  }

  /** Reads the open file to its end, sending each full batch on the way. */
  async function readToEnd(): Promise<void> {
    const current = file as OpenLogFile;
    for (let lines = await current.readLines(); lines.length > 0; lines = await current.readLines()) {
      for (const line of lines) {
        take(line);
        if (resendTo !== undefined && line.end >= resendTo) {
          resendTo = undefined;
          await flush();
        } else if (pending.items.length >= (resendTo === undefined ? batchSize : MAX_BATCH_ITEMS)) {
          // While the batch of before a restart is read again, --batch may have changed: only the route's limit ends it early.
          await flush();
        }
      }
    }
  }

  /** Sends what was read of `current`, closes it, and starts on the file now at the path from its start; false when there is none. */
  async function restartAtPath(current: OpenLogFile): Promise<boolean> {
    await flush();
    await current.close();
    file = null;
    if (!(await start(log, 0))) return false;
    await save();
    return true;
  }

  return {
    /** One poll: read on, follow a rotation or a truncation, and send what is due (everything when `final`). */
    async step(final: boolean): Promise<void> {
      if (!file && !(await open())) return;
      for (;;) {
        await readToEnd();
        const current = file as OpenLogFile;
        const atPath = await inodeOf(log);
        if (atPath && atPath.inode !== current.inode) {
          // The server may still write to the old file until it reopens its log: give it a poll.
          if (!final && rotationSeenAt === undefined) {
            rotationSeenAt = Date.now();
            return;
          }
          rotationSeenAt = undefined;
          await readToEnd();
          if (!(await restartAtPath(current))) return;
          continue;
        }
        if (atPath && atPath.size < current.position && current.path === log) {
          // Truncated in place (copytruncate): what was read is sent, and the file is read again from its start.
          options.report(`${log}: truncated; reading it again from its start`);
          if (!(await restartAtPath(current))) return;
          continue;
        }
        break;
      }
      if (final || pending.items.length >= batchSize || Date.now() - pending.since >= flushMs) await flush();
    },
    async close(): Promise<void> {
      await file?.close();
      file = null;
    },
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      done();
    }, { once: true });
  });
}

/**
 * Forwards the AI fetches of the logs; resolves with what was done once every log is read to its
 * end (`once`) or `signal` aborts. Rejects with a ForwarderStop when the server refuses the token
 * or the site, with a ServerUnavailable when it did not take a batch within `maxRetries` (the
 * batch's lines are read and sent again next time), and with a StateFileError for a state file
 * it cannot read.
 */
export async function forwardAiFetches(options: ForwarderOptions): Promise<ForwarderStats> {
  const stats: ForwarderStats = { lines: 0, otherAgents: 0, malformed: 0, accepted: 0, rejected: 0, replayedBatches: 0 };
  const deliver = createDelivery({
    ...options,
    maxRetries: options.maxRetries ?? (options.once ? 5 : undefined),
    onRetry: (reason, delayMs) => options.report(`send failed (${reason}); retrying in ${Math.round(delayMs / 100) / 10} s`),
  });
  const stores = new Map<string, StateStore>();
  const followers = [];
  for (const log of options.logs) {
    const statePath = resolve(options.statePath ?? defaultStatePath(log));
    let state = stores.get(statePath);
    if (!state) {
      state = await openStateStore(statePath);
      stores.set(statePath, state);
    }
    followers.push(createLogForwarder(log, { options, state, deliver, stats }));
  }
  const { signal } = options;
  try {
    for (;;) {
      for (const follower of followers) await follower.step(options.once === true);
      if (options.once || signal?.aborted) break;
      await sleep(options.pollMs ?? 1000, signal);
      if (signal?.aborted) break;
    }
  } catch (err) {
    // Stopping mid-send: the batch's position was not saved, so its lines are read again next time.
    if (!signal?.aborted) throw err;
  } finally {
    for (const follower of followers) await follower.close();
  }
  return stats;
}
