// Reads a batch of records back from the journal's segment files, from a position up to a record
// count, a byte budget or an exact end position (replaying an intent), stepping over known holes.
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { Position } from './checkpoint.ts';
import { frameAt, HEADER_BYTES, type Hole, payloadText, type RecordCodec } from './frame.ts';

/** Reads go through chunks this big, so a batch of small records costs a few syscalls, not two per record. */
const CHUNK_BYTES = 1024 * 1024;

/** What the reader needs to know about the segments; the journal answers from its in-memory state. */
export interface SegmentView {
  file(seq: number): string;
  /** Bytes that may be read: a closed segment's size, or the durable size of the active one. */
  readableEnd(seq: number): number;
  isClosed(seq: number): boolean;
  holes(seq: number): readonly Hole[] | undefined;
}

export interface ReadLimit {
  maxRecords: number;
  maxBytes: number;
  /** Replay exactly up to here (an intent's end), ignoring the other limits. */
  end?: Position;
}

export interface ReadResult<T> {
  records: T[];
  /** Framed bytes read, headers included: what pendingBytes drops by once the batch is acknowledged. */
  bytes: number;
  start: Position;
  end: Position;
}

export const comparePositions = (a: Position, b: Position) => a.segment - b.segment || a.offset - b.offset;

/**
 * The canonical form of a position: past any hole that starts there, and at the start of the next
 * segment instead of the end of a closed one. Canonical positions make tokens and checkpoints agree
 * however the position was reached, and let an acknowledged closed segment be deleted at once.
 */
export function normalize(view: SegmentView, position: Position): Position {
  let { segment, offset } = position;
  for (;;) {
    const hole = view.holes(segment)?.find((h) => h.from <= offset && offset < h.to);
    if (hole) offset = hole.to;
    else if (view.isClosed(segment) && offset >= view.readableEnd(segment)) {
      segment++;
      offset = 0;
    } else return { segment, offset };
  }
}

async function readAt(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await handle.read(buf, got, length - got, offset + got);
    if (bytesRead === 0) throw new Error(`journal: unexpected end of segment at offset ${offset + got}`);
    got += bytesRead;
  }
  return buf;
}

export async function readRecords<T>(view: SegmentView, from: Position, limit: ReadLimit, codec: RecordCodec<T>): Promise<ReadResult<T>> {
  const start = normalize(view, from);
  const records: T[] = [];
  let bytes = 0;
  let pos = start;
  let handle: FileHandle | null = null;
  let handleSeq = -1;
  let minRead = 0;
  const full = () => (limit.end ? comparePositions(pos, limit.end) >= 0 : records.length >= limit.maxRecords);
  try {
    while (!full()) {
      const segmentEnd = view.readableEnd(pos.segment);
      if (pos.offset >= segmentEnd) break;
      if (!handle || handleSeq !== pos.segment) {
        await handle?.close();
        handle = null;
        handle = await open(view.file(pos.segment), 'r');
        handleSeq = pos.segment;
      }
      // A chunk never crosses a hole: the bytes after a hole start are not frames.
      const nextHole = view.holes(pos.segment)?.find((h) => h.from > pos.offset);
      const chunkEnd = Math.min(nextHole?.from ?? segmentEnd, segmentEnd);
      const chunk = await readAt(handle, pos.offset, Math.min(Math.max(CHUNK_BYTES, minRead), chunkEnd - pos.offset));
      minRead = 0;
      let at = 0;
      let stop = false;
      while (at < chunk.length) {
        const frame = frameAt(chunk, at);
        if (frame === 0) {
          const needed = at + HEADER_BYTES > chunk.length ? HEADER_BYTES : HEADER_BYTES + chunk.readUInt32LE(at);
          if (pos.offset + chunk.length < chunkEnd && pos.offset + at + needed <= chunkEnd) {
            minRead = needed; // the frame continues past this chunk: read again from its start
            break;
          }
          throw new Error(`journal: damaged frame at offset ${pos.offset + at} of ${view.file(pos.segment)} (written after the journal was opened)`);
        }
        if (!limit.end && records.length > 0 && bytes + frame > limit.maxBytes) {
          stop = true;
          break;
        }
        records.push(codec.decode(payloadText(chunk, at, frame)));
        bytes += frame;
        at += frame;
        if (limit.end ? comparePositions({ segment: pos.segment, offset: pos.offset + at }, limit.end) >= 0 : records.length >= limit.maxRecords) break;
      }
      pos = normalize(view, { segment: pos.segment, offset: pos.offset + at });
      if (stop) break;
    }
  } finally {
    await handle?.close();
  }
  if (limit.end && comparePositions(pos, limit.end) !== 0) {
    throw new Error(`journal: the outstanding batch should end at ${limit.end.segment}:${limit.end.offset} but the records end at ${pos.segment}:${pos.offset}`);
  }
  return { records, bytes, start, end: pos };
}
