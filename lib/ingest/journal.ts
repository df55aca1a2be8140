// The on-disk, append-only ingest journal (single node): every accepted event is on disk here
// before the 202, and the writer takes it back out in batches that survive kill -9 without
// double counting. Helpers live in lib/ingest/journal/; this file is the module's entry point.
//
// On disk, in `dir`: segment files 0000000001.seg, 0000000002.seg, … each a run of frames
// [u32 LE length][u32 LE crc32][JSON] (frame.ts), appended through one O_APPEND handle; and
// checkpoint.json (checkpoint.ts): the first unacknowledged record and the outstanding batch.
import { constants as fsConstants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Log } from '../log.ts';
import { batchToken, type Checkpoint, type Intent, type Position, writeCheckpoint } from './journal/checkpoint.ts';
import { encodeFrames, type Hole, JSON_CODEC, type RecordCodec } from './journal/frame.ts';
import { comparePositions, normalize, type ReadResult, readRecords, type SegmentView } from './journal/reader.ts';
import { createSegment, PAGE_CACHE_APPENDS, type Recovered, recoverJournal, segmentFile } from './journal/recover.ts';

export type { RecordCodec } from './journal/frame.ts';

export interface JournalOptions<T = unknown> {
  /** e.g. <dataDir>/journal; created if missing. */
  dir: string;
  log: Log;
  /** Capacity for unacknowledged data; beyond it append() rejects with JournalFullError. Default 256 MiB. */
  maxPendingBytes?: number;
  /** Roll to a new segment file past this size. Default 64 MiB. */
  segmentBytes?: number;
  /** Default true. Off only where durability is not what is being tested. */
  fsync?: boolean;
  /**
   * 0 (default): an append resolves after the fsync of the round that wrote it (survives a power
   * loss). Above 0: it resolves once the write reached the kernel (survives a killed process, not
   * a power loss), and the data is fsync'd every this many milliseconds.
   */
  syncEveryMs?: number;
  /** How a record is framed on disk and read back. Default JSON. */
  codec?: RecordCodec<T>;
  /**
   * Appended records are also kept in memory, up to this many framed bytes (oldest dropped
   * first), and next() hands them out from there instead of reading and decoding them back from
   * disk. Default 32 MiB.
   */
  memoryBytes?: number;
  /** Called after each fsync of the data file (a round's, or the interval's) with how long it took, in seconds. */
  onSynced?: (seconds: number) => void;
}

/** The buffer is full: the server answers 503 with Retry-After instead of holding events in memory. */
export class JournalFullError extends Error {
  readonly retryAfterSeconds: number;
  constructor(pendingBytes: number, maxPendingBytes: number, retryAfterSeconds = 2) {
    super(`ingest journal is full (${pendingBytes} of ${maxPendingBytes} bytes waiting to be written to the analytics store)`);
    this.name = 'JournalFullError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface JournalBatch<T> {
  records: T[];
  /** Deterministic for this exact batch: the same records re-read after a crash get the same token. */
  token: string;
  /** Durable: once it resolves these records are never returned again, even after a crash. */
  ack(): Promise<void>;
}

export interface Journal<T> {
  /** Resolves only once the records are on disk: fsync'd, or written to the kernel with syncEveryMs. */
  append(records: readonly T[]): Promise<void>;
  /**
   * Null when nothing is pending. One batch may be outstanding at a time: calling next() before
   * ack() rejects. After a reopen, the first call returns the batch that was outstanding at the
   * stop exactly as it was (same records, same token), whatever the limits passed. Records still
   * in memory come back as the very objects appended (so a record must not be changed once
   * appended); others are decoded from disk.
   */
  next(maxRecords: number, maxBytes?: number): Promise<JournalBatch<T> | null>;
  pendingBytes(): number;
  pendingRecords(): number;
  /** appends: accepted append() calls; fsyncs: data-file fsyncs; segments: segment files on disk. */
  stats(): { appends: number; fsyncs: number; segments: number };
  /** Waits for in-flight appends; idempotent. An outstanding batch stays durable and is replayed at the next open. */
  close(): Promise<void>;
}

interface Waiter<T> {
  frames: Buffer;
  sizes: number[];
  records: readonly T[];
  resolve(): void;
  reject(err: unknown): void;
}

/** A durable record kept in memory, at its frame's position. */
interface Remembered<T> {
  segment: number;
  offset: number;
  frame: number;
  record: T;
}

const MiB = 1024 * 1024;

/**
 * How a segment is opened for appends. When every round must be on disk before its appends resolve,
 * it is opened with O_DSYNC where the platform has it: a round's write returns once its data is on
 * disk, one thread-pool job a round instead of a write and then an fdatasync, and under load each
 * job's hand-off waits for a core (docs/decisions.md, "A journal round is one synced write").
 */
function appendFlags(options: { fsync: boolean; syncEveryMs: number }): string | number {
  const { O_APPEND, O_CREAT, O_DSYNC, O_WRONLY } = fsConstants;
  return options.fsync && options.syncEveryMs === 0 && O_DSYNC !== undefined ? O_WRONLY | O_APPEND | O_CREAT | O_DSYNC : PAGE_CACHE_APPENDS;
}

class FileJournal<T> implements Journal<T>, SegmentView {
  private readonly dir: string;
  private readonly log: Log;
  private readonly maxPendingBytes: number;
  private readonly segmentBytes: number;
  private readonly fsync: boolean;
  private readonly syncEveryMs: number;
  /** How segments are opened for appends (appendFlags). */
  private readonly segmentFlags: string | number;
  /** Written and not yet fsync'd (only with syncEveryMs). */
  private unsynced = false;
  /** The interval's fsync in progress: a roll or close waits for it before closing the handle. */
  private syncing: Promise<void> = Promise.resolve();
  private syncTimer: NodeJS.Timeout | null = null;
  private readonly codec: RecordCodec<T>;
  private readonly memoryBytes: number;
  private readonly dirHandle: FileHandle;
  private readonly journalId: string;
  private readonly closedSizes: Map<number, number>;
  private readonly holeMap: Map<number, Hole[]>;
  private active: { seq: number; handle: FileHandle; size: number; durable: number };
  /** First unacknowledged record, as durable in checkpoint.json. */
  private position: Position;
  private replay: { intent: Intent; read: ReadResult<T> } | null = null;
  private outstanding = false;
  private queue: Waiter<T>[] = [];
  /** Durable records in append order, a contiguous run ending at the durable end; from `memoryHead` on. */
  private memory: Remembered<T>[] = [];
  private memoryHead = 0;
  private memoryUsed = 0;
  private flushing: Promise<void> | null = null;
  private checkpointing: Promise<unknown> = Promise.resolve();
  private taking: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;
  private pending = { bytes: 0, records: 0 };
  private counters = { appends: 0, fsyncs: 0 };
  private readonly onSynced: (seconds: number) => void;

  constructor(options: Required<JournalOptions<T>>, dirHandle: FileHandle, recovered: Recovered, activeHandle: FileHandle) {
    this.dir = options.dir;
    this.log = options.log;
    this.maxPendingBytes = options.maxPendingBytes;
    this.segmentBytes = options.segmentBytes;
    this.fsync = options.fsync;
    this.syncEveryMs = options.fsync ? options.syncEveryMs : 0;
    this.segmentFlags = appendFlags(options);
    if (this.syncEveryMs > 0) {
      this.syncTimer = setInterval(() => void this.syncWritten(), this.syncEveryMs);
      this.syncTimer.unref();
    }
    this.codec = options.codec;
    this.memoryBytes = options.memoryBytes;
    this.onSynced = options.onSynced;
    this.dirHandle = dirHandle;
    this.journalId = recovered.checkpoint.journal;
    this.closedSizes = recovered.closed;
    this.holeMap = recovered.holes;
    this.active = { seq: recovered.active.seq, handle: activeHandle, size: recovered.active.size, durable: recovered.active.size };
    this.position = { segment: recovered.checkpoint.segment, offset: recovered.checkpoint.offset };
    this.pending = { bytes: recovered.pendingBytes, records: recovered.pendingRecords };
  }

  /** Reads the outstanding batch of the last run now, so a journal that cannot replay it refuses to open. */
  async loadIntent(intent: Intent | undefined): Promise<void> {
    if (!intent) return;
    const read = await readRecords<T>(this, intent.start, { maxRecords: Number.POSITIVE_INFINITY, maxBytes: Number.POSITIVE_INFINITY, end: intent.end }, this.codec);
    this.replay = { intent, read };
    this.log.info({ token: intent.token, records: read.records.length }, 'journal: the batch outstanding at the last stop will be handed out again');
  }

  // SegmentView, for the reader.
  file(seq: number): string {
    return segmentFile(this.dir, seq);
  }
  readableEnd(seq: number): number {
    if (seq === this.active.seq) return this.active.durable;
    return this.closedSizes.get(seq) ?? 0;
  }
  isClosed(seq: number): boolean {
    return this.closedSizes.has(seq);
  }
  holes(seq: number): readonly Hole[] | undefined {
    return this.holeMap.get(seq);
  }

  append(records: readonly T[]): Promise<void> {
    if (this.closing) return Promise.reject(new Error('journal is closed'));
    if (this.failure) return Promise.reject(new Error(`journal stopped accepting appends after a write failure: ${this.failure.message}`, { cause: this.failure }));
    if (records.length === 0) return Promise.resolve();
    let frames: Buffer;
    let sizes: number[];
    try {
      ({ data: frames, sizes } = encodeFrames(records, this.codec));
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.pending.bytes + frames.length > this.maxPendingBytes) {
      return Promise.reject(new JournalFullError(this.pending.bytes, this.maxPendingBytes));
    }
    this.pending.bytes += frames.length;
    this.pending.records += records.length;
    this.counters.appends++;
    return new Promise((resolve, reject) => {
      this.queue.push({ frames, sizes, records, resolve, reject });
      // Started on a microtask so appends issued in the same tick share the first round too.
      if (!this.flushing) this.flushing = Promise.resolve().then(() => this.flushRounds());
    });
  }

  /**
   * Group commit: each round takes every append queued so far and does one write and one fsync for
   * all of them; appends arriving meanwhile wait for the next round. Each append resolves only
   * after the fsync of the round that wrote it.
   */
  private async flushRounds(): Promise<void> {
    while (this.queue.length > 0) {
      const round = this.queue;
      this.queue = [];
      const data = round.length === 1 ? round[0].frames : Buffer.concat(round.map((w) => w.frames));
      try {
        if (this.failure) throw this.failure;
        if (this.active.size > 0 && this.active.size + data.length > this.segmentBytes) await this.roll();
        const { seq, size: offset } = this.active;
        const started = performance.now();
        let written = 0;
        while (written < data.length) written += (await this.active.handle.write(data, written, data.length - written)).bytesWritten;
        this.active.size += data.length;
        if (this.syncedWrites) this.synced(started);
        else if (this.syncEveryMs > 0) this.unsynced = true;
        else if (this.fsync) await this.syncData();
        this.active.durable = this.active.size;
        this.remember(round, seq, offset);
        for (const waiter of round) waiter.resolve();
      } catch (err) {
        // After a failed write or fsync the page cache can no longer be trusted (an fsync error may
        // have dropped dirty pages), so the journal stops; reopening recovers from what is on disk.
        this.failure ??= err as Error;
        this.log.error({ err, dir: this.dir }, 'journal: write failed; appends are refused until the journal is reopened');
        for (const waiter of round) {
          this.pending.bytes -= waiter.frames.length;
          this.pending.records -= waiter.records.length;
          waiter.reject(err);
        }
      }
    }
    this.flushing = null;
  }

  /** Keeps a round's records in memory, at the positions they were written to; the oldest go past the budget. */
  private remember(round: readonly Waiter<T>[], segment: number, offset: number): void {
    for (const waiter of round) {
      for (let i = 0; i < waiter.records.length; i++) {
        this.memory.push({ segment, offset, frame: waiter.sizes[i], record: waiter.records[i] });
        offset += waiter.sizes[i];
        this.memoryUsed += waiter.sizes[i];
      }
    }
    while (this.memoryUsed > this.memoryBytes && this.memoryHead < this.memory.length) this.memoryUsed -= this.memory[this.memoryHead++].frame;
    this.compactMemory();
  }

  /** Forgets remembered records before `position` (acknowledged, or read from disk). */
  private forgetBefore(position: Position): void {
    while (this.memoryHead < this.memory.length && comparePositions(this.memory[this.memoryHead], position) < 0) {
      this.memoryUsed -= this.memory[this.memoryHead++].frame;
    }
    this.compactMemory();
  }

  private compactMemory(): void {
    if (this.memoryHead === this.memory.length) {
      this.memory = [];
      this.memoryHead = 0;
    } else if (this.memoryHead > 1024 && this.memoryHead * 2 > this.memory.length) {
      this.memory = this.memory.slice(this.memoryHead);
      this.memoryHead = 0;
    }
  }

  /** The batch from `start` if memory holds the records there, with the same limits and end a disk read would have. */
  private readMemory(start: Position, maxRecords: number, maxBytes: number): ReadResult<T> | null {
    const first = this.memory[this.memoryHead];
    if (!first || comparePositions(first, start) !== 0) return null;
    const records: T[] = [];
    let bytes = 0;
    let last = first;
    for (let i = this.memoryHead; i < this.memory.length && records.length < maxRecords; i++) {
      const entry = this.memory[i];
      if (records.length > 0 && bytes + entry.frame > maxBytes) break;
      records.push(entry.record);
      bytes += entry.frame;
      last = entry;
    }
    return { records, bytes, start, end: normalize(this, { segment: last.segment, offset: last.offset + last.frame }) };
  }

  /** Segments are opened with O_DSYNC: a round's write is its sync. */
  private get syncedWrites(): boolean {
    return this.segmentFlags !== PAGE_CACHE_APPENDS;
  }

  /** An fsync of the active segment's data, counted and timed. */
  private async syncData(): Promise<void> {
    const started = performance.now();
    await this.active.handle.datasync();
    this.synced(started);
  }

  /** Counts and reports a sync of the data (an fdatasync, or a round's write with O_DSYNC) that began at `started`. */
  private synced(started: number): void {
    this.counters.fsyncs++;
    // The data is on disk: a report that throws must not be taken for a failed fsync, which stops the journal.
    try {
      this.onSynced((performance.now() - started) / 1000);
    } catch (err) {
      this.log.warn({ err }, 'journal: reporting an fsync failed');
    }
  }

  /**
   * The interval's fsync of what was written since the last one. A failure stops the journal as a
   * failed round does: acknowledged data may not be on disk, so nothing more is acknowledged.
   */
  private syncWritten(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      if (!this.unsynced || this.failure) return;
      this.unsynced = false;
      try {
        await this.syncData();
      } catch (err) {
        this.failure ??= err as Error;
        this.log.error({ err, dir: this.dir }, 'journal: fsync failed; appends are refused until the journal is reopened');
      }
    });
    return this.syncing;
  }

  /**
   * Starts the next segment. Runs between rounds, and the old segment is fsync'd first (at once,
   * with syncEveryMs), so only the newest segment can ever end torn.
   */
  private async roll(): Promise<void> {
    await this.syncWritten();
    const seq = this.active.seq + 1;
    const handle = await createSegment(this.dir, this.dirHandle, seq, this.fsync, this.segmentFlags);
    await this.active.handle.close();
    this.closedSizes.set(this.active.seq, this.active.size);
    this.active = { seq, handle, size: 0, durable: 0 };
  }

  next(maxRecords: number, maxBytes = Number.POSITIVE_INFINITY): Promise<JournalBatch<T> | null> {
    const taken = this.take(maxRecords, maxBytes);
    // close() waits for it. The chain settles to nothing: allSettled's own result would hold every
    // batch ever taken (each result holding the one before it), all the node has ever ingested.
    this.taking = Promise.allSettled([this.taking, taken]).then(() => undefined);
    return taken;
  }

  private async take(maxRecords: number, maxBytes: number): Promise<JournalBatch<T> | null> {
    if (this.closing) throw new Error('journal is closed');
    if (this.outstanding) throw new Error('journal: a batch is outstanding; ack() it before calling next() again');
    if (!(maxRecords >= 1)) throw new RangeError(`journal: maxRecords must be at least 1 (got ${maxRecords})`);
    this.outstanding = true;
    try {
      let intent: Intent;
      let read: ReadResult<T>;
      if (this.replay) {
        ({ intent, read } = this.replay);
      } else {
        const start = normalize(this, this.position);
        this.forgetBefore(start);
        read = this.readMemory(start, maxRecords, maxBytes) ?? (await readRecords<T>(this, this.position, { maxRecords, maxBytes }, this.codec));
        if (read.records.length === 0) {
          this.outstanding = false;
          return null;
        }
        intent = { start: read.start, end: read.end, token: batchToken(this.journalId, read.start, read.end) };
        // Durable before the batch leaves: after a crash the same range comes back with the same token.
        await this.checkpoint({ ...read.start, intent });
      }
      // ack() twice is one ack; a failed ack (checkpoint write error) may be retried.
      let acked: Promise<void> | null = null;
      const ack = () =>
        (acked ??= this.ack(intent, read).catch((err: unknown) => {
          acked = null;
          throw err;
        }));
      return { records: read.records, token: intent.token, ack };
    } catch (err) {
      this.outstanding = false;
      throw err;
    }
  }

  private async ack(intent: Intent, read: ReadResult<T>): Promise<void> {
    if (this.closing) throw new Error('journal is closed');
    await this.checkpoint({ ...intent.end });
    this.replay = null;
    this.pending.bytes -= read.bytes;
    this.pending.records -= read.records.length;
    this.outstanding = false;
  }

  /** Makes the position (and intent, if any) durable, then deletes the segments it has passed. */
  private async checkpoint(next: Position & { intent?: Intent }): Promise<void> {
    const write = async () => {
      const checkpoint: Checkpoint = { journal: this.journalId, ...next };
      await writeCheckpoint(this.dir, this.dirHandle, checkpoint, this.fsync);
      this.position = { segment: next.segment, offset: next.offset };
      // No directory fsync for the deletions: a deletion that is lost in a crash is redone at open.
      for (const seq of [...this.closedSizes.keys()].filter((s) => s < next.segment)) {
        await rm(segmentFile(this.dir, seq), { force: true });
        this.closedSizes.delete(seq);
        this.holeMap.delete(seq);
      }
    };
    const done = this.checkpointing.then(write);
    this.checkpointing = done.catch(() => {});
    return done;
  }

  pendingBytes(): number {
    return this.pending.bytes;
  }
  pendingRecords(): number {
    return this.pending.records;
  }
  stats() {
    return { ...this.counters, segments: this.closedSizes.size + 1 };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.flushing;
      if (this.syncTimer) clearInterval(this.syncTimer);
      await this.syncWritten();
      await this.taking;
      await this.checkpointing;
      await this.active.handle.close();
      await this.dirHandle.close();
    })();
    return this.closing;
  }
}

/** Creates the directory; the entries of any directories created are fsync'd, or a crash could lose the whole journal. */
async function makeDurableDir(dir: string, fsync: boolean): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (!first || !fsync) return;
  for (let child = dir; child !== dirname(first); child = dirname(child)) {
    const parent = await open(dirname(child), 'r');
    try {
      await parent.sync();
    } finally {
      await parent.close();
    }
  }
}

export async function openJournal<T>(options: JournalOptions<T>): Promise<Journal<T>> {
  const settings: Required<JournalOptions<T>> = {
    maxPendingBytes: 256 * MiB,
    segmentBytes: 64 * MiB,
    fsync: true,
    syncEveryMs: 0,
    codec: JSON_CODEC as RecordCodec<T>,
    memoryBytes: 32 * MiB,
    ...options,
    // A caller may pass it as undefined.
    onSynced: options.onSynced ?? (() => undefined),
  };
  await makeDurableDir(settings.dir, settings.fsync);
  const dirHandle = await open(settings.dir, 'r');
  let activeHandle: FileHandle | null = null;
  try {
    const recovered = await recoverJournal(settings.dir, dirHandle, settings.log, settings.fsync);
    activeHandle = await open(segmentFile(settings.dir, recovered.active.seq), appendFlags(settings), 0o600);
    const journal = new FileJournal<T>(settings, dirHandle, recovered, activeHandle);
    await journal.loadIntent(recovered.checkpoint.intent);
    settings.log.info(
      { dir: settings.dir, pendingRecords: journal.pendingRecords(), pendingBytes: journal.pendingBytes(), segments: journal.stats().segments },
      'journal opened',
    );
    return journal;
  } catch (err) {
    await activeHandle?.close();
    await dirHandle.close();
    throw err;
  }
}
